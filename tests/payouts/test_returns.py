"""Returns after success: a payout the beneficiary's bank sends back after it was reported
successful stays ``successful``, gains ``returned_at`` and ``return_reason``, credits its
principal (and, by setting, its fee) back to available in one ``payout_return`` entry, and
records ``payout.returned`` — once per payout, however the return is learned and however many
times at once."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from core.dates import local_today
from core.exceptions import ConflictError
from merchants.models import Mode
from payouts.models import PayoutStatus
from payouts.providers.sandbox import ACCOUNT_SUCCEEDS_THEN_RETURNED
from payouts.services import (
    payout_dispatch,
    payout_return,
    payout_return_check,
    payouts_check_returns,
)
from tests.payouts.helpers import assert_wallet_balanced, fund_wallet, reload
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get
from wallets.statements import wallet_statement
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db

RETURN_URL = "/api/v1/test-helpers/payouts/{}/return"


@pytest.fixture
def paid(funded_wallet, create_payout):
    """A ₦2,500.00 (+ fee) test payout to the account that is paid, then returned."""
    payout = create_payout(
        account_number=ACCOUNT_SUCCEEDS_THEN_RETURNED, amount=Decimal("2500.00")
    ).payout
    payout_dispatch(payout_id=payout.pk)
    payout = reload(payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    return payout


def _returns(payout) -> list[LedgerEntry]:
    return list(
        LedgerEntry.objects.filter(payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_RETURN)
    )


def test_a_check_with_the_provider_finds_the_return_and_credits_the_principal(paid) -> None:
    before = reload(paid).wallet.available_balance

    result = payout_return_check(payout=paid)

    payout = reload(paid)
    assert result is not None and result.applied
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.returned_at is not None
    assert "returned by the beneficiary bank" in payout.return_reason
    [entry] = _returns(payout)
    assert (entry.amount, entry.fee_amount) == (Decimal("2500.00"), Decimal("0.00"))
    assert (entry.available_delta, entry.reserved_delta) == (Decimal("2500.00"), Decimal("0.00"))
    assert payout.wallet.available_balance == before + Decimal("2500.00")
    assert_wallet_balanced(payout.wallet)


def test_the_return_is_told_to_the_merchant(paid) -> None:
    payout_return_check(payout=paid)

    event = Event.objects.get(payout=paid, event_type=EventType.PAYOUT_RETURNED)
    assert '"event":"payout.returned"' in event.body
    assert '"status":"successful"' in event.body
    assert '"return_reason":"Transfer returned by the beneficiary bank' in event.body


def test_the_fee_is_refunded_only_when_the_setting_says_so(paid, settings) -> None:
    settings.PAYOUT_RETURN_REFUNDS_FEE = True

    payout_return(payout_id=paid.pk, reason="Account closed")

    [entry] = _returns(paid)
    assert entry.fee_amount == paid.fee_amount > 0
    assert entry.available_delta == paid.amount + paid.fee_amount


def test_a_payout_is_returned_once(paid) -> None:
    first = payout_return(payout_id=paid.pk, reason="Account closed")
    second = payout_return(payout_id=paid.pk, reason="Again")

    assert first.applied and not second.applied
    assert payout_return_check(payout=reload(paid)) is None
    assert len(_returns(paid)) == 1
    assert Event.objects.filter(payout=paid, event_type=EventType.PAYOUT_RETURNED).count() == 1
    assert reload(paid).return_reason == "Account closed"


def test_only_a_successful_payout_can_be_returned(funded_wallet, create_payout) -> None:
    waiting = create_payout().payout

    with pytest.raises(ConflictError):
        payout_return(payout_id=waiting.pk)

    assert reload(waiting).returned_at is None


def test_a_payout_still_paid_is_left_alone(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)

    assert payout_return_check(payout=reload(payout)) is None
    assert reload(payout).returned_at is None


def test_the_sweeper_finds_returns_among_recent_successes(paid, funded_wallet, create_payout):
    other = create_payout().payout
    payout_dispatch(payout_id=other.pk)

    report = payouts_check_returns(since=timedelta(days=7), limit=10)

    assert [result.payout.pk for result in report.returned] == [paid.pk]
    assert (report.checked, report.errors) == (2, 0)
    assert report.summary() == (
        "Checked 2 successful payout(s) of the last 7 day(s): 1 returned; 0 error(s)."
    )


def test_the_check_returns_command_lists_each_return(paid, funded_wallet) -> None:
    out, err = StringIO(), StringIO()
    call_command("check_returns", stdout=out, stderr=err)

    payout = reload(paid)
    assert out.getvalue().splitlines() == [
        f"payout {payout.internal_reference} (#{payout.pk}): returned ₦2,500.00 "
        f"({payout.return_reason})",
        "Checked 1 successful payout(s) of the last 7 day(s): 1 returned; 0 error(s).",
    ]
    assert "returns [" in err.getvalue()


def test_the_check_returns_command_json(paid, funded_wallet) -> None:
    out = StringIO()
    call_command("check_returns", "--json", stdout=out, stderr=StringIO())

    result = json.loads(out.getvalue())
    assert (result["checked"], result["errors"], result["ok"]) == (1, 0, True)
    assert result["returned"][0]["payout"] == paid.internal_reference
    assert result["returned"][0]["amount"] == "2500.00"


def test_the_statement_counts_the_return(paid) -> None:
    payout_return(payout_id=paid.pk)

    today = local_today()
    statement = wallet_statement(wallet=reload(paid).wallet, first_day=today, last_day=today)

    assert statement.totals.returns.count == 1
    assert statement.totals.returns.amount == Decimal("2500.00")
    assert statement.closing.available == reload(paid).wallet.available_balance


# --- The test helper route -------------------------------------------------------------------


def test_the_helper_returns_a_test_payout(paid, client_for, merchant_account) -> None:
    client = client_for(merchant_account.test_key.plaintext)

    response = client.post(
        RETURN_URL.format(paid.pk), {"reason": "Beneficiary deceased"}, format="json"
    )
    again = client.post(RETURN_URL.format(paid.pk), {}, format="json")

    assert response.status_code == 200
    data = response.json()["data"]
    assert data["status"] == "successful"
    assert data["return_reason"] == "Beneficiary deceased"
    assert data["returned_at"] is not None
    assert again.status_code == 409
    assert again.json()["message"] == "Payout was already returned"
    detail = client.get(f"/api/v1/transactions/in/merchant-wallet/payouts/{paid.pk}").json()
    assert detail["data"]["returned_at"] == data["returned_at"]


def test_the_helper_does_not_exist_in_live_mode(paid, client_for, merchant_account) -> None:
    response = client_for(merchant_account.live_key.plaintext).post(
        RETURN_URL.format(paid.pk), {}, format="json"
    )

    assert response.status_code == 404
    assert reload(paid).returned_at is None


def test_the_helper_refuses_a_payout_that_is_not_successful(
    funded_wallet, create_payout, client_for, merchant_account
) -> None:
    waiting = create_payout().payout

    response = client_for(merchant_account.test_key.plaintext).post(
        RETURN_URL.format(waiting.pk), {}, format="json"
    )

    assert response.status_code == 409
    assert response.json()["message"] == "Only a successful payout can be returned"


def test_the_helper_refuses_unknown_fields(paid, client_for, merchant_account) -> None:
    response = client_for(merchant_account.test_key.plaintext).post(
        RETURN_URL.format(paid.pk), {"amount": "1.00"}, format="json"
    )

    assert response.status_code == 400
    assert reload(paid).returned_at is None


# --- A return racing a requery -------------------------------------------------------------------


@pytest.mark.slow  # real threads racing across transactions
@pytest.mark.django_db(transaction=True)
def test_a_return_racing_a_check_returns_once(paid_transactional) -> None:
    payout = paid_transactional
    barrier = threading.Barrier(4)
    outcomes: list[object] = []
    lock = threading.Lock()

    def race(kind: str) -> None:
        try:
            barrier.wait(timeout=30)
            if kind == "check":
                result = payout_return_check(payout=reload(payout))
            else:
                result = payout_return(payout_id=payout.pk, reason="Helper")
            with lock:
                outcomes.append(result.applied if result is not None else None)
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(kind,)) for kind in ("check", "helper") * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(outcomes) == 4
    assert outcomes.count(True) == 1
    assert len(_returns(payout)) == 1
    assert Event.objects.filter(payout=payout, event_type=EventType.PAYOUT_RETURNED).count() == 1
    assert_wallet_balanced(reload(payout).wallet)


@pytest.fixture
def paid_transactional(merchant_account, create_payout):
    fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "10000.00")
    payout = create_payout(
        account_number=ACCOUNT_SUCCEEDS_THEN_RETURNED, amount=Decimal("2500.00")
    ).payout
    payout_dispatch(payout_id=payout.pk)
    return reload(payout)
