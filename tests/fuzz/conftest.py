"""A merchant world for the schema fuzzer: funded test wallet, catalogue, a payout, a bulk
payout, a collection transaction and a refund of another, paid one, a restricted key, so
generated requests can reach real objects as well as 404s."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.core import signals
from django.db import close_old_connections

from beneficiaries.services import beneficiary_create
from collections_app.services import CustomerInfo, transaction_confirm, transaction_initialize
from core import ssrf
from merchants.models import Mode
from merchants.services import MerchantCreated, webhook_settings_set
from payment_items.demo import demo_catalogue_seed
from payouts.events import payout_event_emit
from payouts.models import PayoutStatus
from payouts.services import PayoutBatchItem, payout_batch_create, payout_create
from payouts.services.controls import payout_approval_threshold_set
from refunds.services import refund_create
from tests.merchants.factories import RestrictedKeyFactory
from tests.payouts.factories import PayoutFactory
from tests.settlements.factories_api import (
    SettlementFactory,
    SettlementShareFactory,
    settled_collection,
)
from wallets.selectors import wallet_get
from wallets.services import wallet_fund
from webhooks.models import Event

CALLBACK_URL = "https://merchant.example.com/payments/callback"
WEBHOOK_URL = "https://merchant.example.com/webhooks"
PUBLIC_ADDRESS = "93.184.216.34"


@dataclass(frozen=True)
class FuzzWorld:
    test_key: str
    live_key: str
    payout_id: int
    payment_item_id: int
    transaction_reference: str
    event_id: str
    successful_payout_id: int  # what the return helper needs: a successful payout
    beneficiary_id: int
    batch_id: int
    refund_id: str
    settlement_id: str
    key_id: int  # a restricted key of the test mode: the keys routes' existing object
    held_payout_id: int  # awaiting approval: what approve and cancel need

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.test_key}"}

    def path_parameters(self, names: set[str], *, label: str = "") -> dict[str, Any]:
        """Existing objects for the operation's path parameters (the ones it has)."""
        returning = label.endswith("/return")
        held = label.endswith("/approve") or label.endswith("/cancel")
        payout_id = self.payout_id
        if returning:
            payout_id = self.successful_payout_id
        elif held:
            payout_id = self.held_payout_id
        known: dict[str, Any] = {
            "payout_id": payout_id,
            "payment_item_id": self.payment_item_id,
            "reference": self.transaction_reference,
            "event_id": self.event_id,
            "beneficiary_id": self.beneficiary_id,
            "batch_id": self.batch_id,
            "refund_id": self.refund_id,
            "settlement_id": self.settlement_id,
            "key_id": self.key_id,
            "provider_name": "sandbox-b",  # a sandbox provider the switch may turn down or up
        }
        return {name: value for name, value in known.items() if name in names}


@pytest.fixture(autouse=True)
def _keep_the_test_connection() -> Iterator[None]:
    """Requests go through the WSGI app directly (not Django's test client), so, as that client
    does, keep Django from closing the test's database connection at each request's end."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def offline_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Callback URLs resolve without the network: merchant.example.com is public, every other
    generated host does not exist."""

    def resolve(host: str, port: int) -> list[str]:
        if host == "merchant.example.com":
            return [PUBLIC_ADDRESS]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(ssrf, "system_resolver", resolve)


@pytest.fixture
def fuzz_world(merchant_account: MerchantCreated) -> FuzzWorld:
    merchant = merchant_account.merchant
    wallet = wallet_get(merchant=merchant, mode=Mode.TEST)
    wallet_fund(wallet_id=wallet.pk, amount=Decimal("1000000.00"), reference="FUZZ-FUND-1")
    catalogue = demo_catalogue_seed(merchant=merchant)
    fixed_item_id = catalogue["payment_items"]["fixed"]
    payout = payout_create(
        merchant=merchant,
        mode=Mode.TEST,
        account_number="0123456789",
        bank_code="058",
        amount=Decimal("1500.00"),
        idempotency_key="fuzz-payout-1",
        narration="fuzz",
    ).payout
    collection = transaction_initialize(
        merchant=merchant,
        mode=Mode.TEST,
        payment_item_id=fixed_item_id,
        transaction_reference="fuzz-ref-1",
        channel="bank-transfer",
        amount=Decimal("7000.00"),
        customer_info=CustomerInfo(
            email="ada@example.com",
            phone_number="08012345678",
            first_name="Ada",
            last_name="Obi",
        ),
        callback_url=CALLBACK_URL,
    ).transaction
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=WEBHOOK_URL)
    settled = PayoutFactory(wallet=wallet, status=PayoutStatus.SUCCESSFUL, narration="fuzz event")
    batch = payout_batch_create(
        merchant=merchant,
        mode=Mode.TEST,
        batch_reference="fuzz-batch-1",
        items=[
            PayoutBatchItem(
                idempotency_key="fuzz-bulk-1",
                arguments={
                    "account_number": "0123456789",
                    "bank_code": "058",
                    "amount": Decimal("250.00"),
                    "idempotency_key": "fuzz-bulk-1",
                },
            )
        ],
    ).batch
    payout_event_emit(payout=settled)
    paid = transaction_initialize(
        merchant=merchant,
        mode=Mode.TEST,
        payment_item_id=fixed_item_id,
        transaction_reference="fuzz-ref-paid",
        channel="card",
        amount=Decimal("7000.00"),
        customer_info=CustomerInfo(
            email="ada@example.com",
            phone_number="08012345678",
            first_name="Ada",
            last_name="Obi",
        ),
        callback_url=CALLBACK_URL,
    ).transaction
    transaction_confirm(collection=paid, outcome="paid")
    refund = refund_create(
        merchant=merchant,
        mode=Mode.TEST,
        transaction_reference=paid.reference,
        amount=Decimal("100.00"),
        reason="fuzz",
        idempotency_key="fuzz-refund-1",
        initiated_by="fuzz",
    ).refund
    settlement = SettlementFactory(merchant=merchant, mode=Mode.TEST, transaction_count=1)
    SettlementShareFactory(settlement=settlement)
    settled_collection(settlement=settlement)
    restricted_key_id = RestrictedKeyFactory(merchant=merchant, mode=Mode.TEST).pk
    # A payout another key created at the approval threshold: it waits for approval (the
    # threshold is lifted again so that the generated creates are not held).
    payout_approval_threshold_set(
        wallet_id=wallet.pk, approval_threshold=Decimal("2000.00"), actor="fuzz"
    )
    held = payout_create(
        merchant=merchant,
        mode=Mode.TEST,
        account_number="0123456789",
        bank_code="058",
        amount=Decimal("2000.00"),
        idempotency_key="fuzz-payout-held",
        narration="fuzz held",
        created_by_key_id=restricted_key_id,
    ).payout
    payout_approval_threshold_set(wallet_id=wallet.pk, approval_threshold=None, actor="fuzz")
    return FuzzWorld(
        test_key=merchant_account.test_key.plaintext,
        live_key=merchant_account.live_key.plaintext,
        payout_id=payout.pk,
        payment_item_id=fixed_item_id,
        transaction_reference=collection.reference,
        event_id=Event.objects.get(payout=settled).event_id,
        successful_payout_id=settled.pk,
        beneficiary_id=beneficiary_create(
            merchant=merchant,
            mode=Mode.TEST,
            account_number="0123456789",
            bank_code="058",
            nickname="fuzz",
        ).beneficiary.pk,
        batch_id=batch.pk,
        refund_id=refund.refund_id,
        settlement_id=settlement.settlement_id,
        key_id=restricted_key_id,
        held_payout_id=held.pk,
    )
