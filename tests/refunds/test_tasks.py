"""Refund tasks: the send task's body, the sweeper's beat task, and the platform equation over
random sequences of payments, refunds, provider outcomes and settlements."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import Sum
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collections_app.models import CollectionTransaction
from core.exceptions import ApplicationError
from merchants.models import Mode
from refunds import services, tasks
from refunds.models import Refund, RefundStatus
from refunds.services import refund_create
from settlements.models import PlatformAccount
from settlements.platform_ledger import platform_balances
from tests.merchants.factories import MerchantFactory
from tests.refunds.factories import collection_settle, paid_collection, wallet_of
from wallets.models import LedgerEntry
from wallets.services import wallet_fund, wallets_create_for_merchant

pytestmark = pytest.mark.django_db


def test_send_task_processes_a_sandbox_refund_and_is_idempotent(merchant) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.TEST,
        transaction_reference=collection.reference,
        amount=Decimal("10.00"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund

    assert tasks.refund_send_task.run(refund.pk) == RefundStatus.PROCESSED
    assert tasks.refund_send_task.run(refund.pk) == RefundStatus.PROCESSED
    assert tasks.refund_send_task.run(999_999) is None


def test_create_enqueues_the_send_task_on_commit(
    merchant, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    sent: list[list[int]] = []
    monkeypatch.setattr(
        tasks.refund_send_task, "apply_async", lambda args, **kwargs: sent.append(list(args))
    )
    collection = paid_collection(merchant=merchant)

    with django_capture_on_commit_callbacks(execute=True):
        refund = refund_create(
            merchant=merchant,
            mode=Mode.TEST,
            transaction_reference=collection.reference,
            amount=Decimal("10.00"),
            reason="",
            idempotency_key="k",
            initiated_by="test",
        ).refund

    assert sent == [[refund.pk]]


def test_broker_outage_leaves_the_refund_for_the_sweeper(merchant, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def down(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.refund_send_task, "apply_async", down)

    assert services.refund_send_enqueue(refund_id=1) is False


def test_sweeper_task_queues_due_refunds(merchant, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    queued: list[int] = []
    monkeypatch.setattr(
        services, "refund_send_enqueue", lambda *, refund_id: queued.append(refund_id) or True
    )
    collection = paid_collection(merchant=merchant)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.TEST,
        transaction_reference=collection.reference,
        amount=Decimal("10.15"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund
    # Created a lease ago and never sent: the send queued at its creation was lost.
    Refund.objects.filter(pk=refund.pk).update(
        created_at=timezone.now() - timedelta(seconds=django_settings.REFUND_SEND_LEASE_SECONDS + 1)
    )

    assert tasks.refunds_check_due_task.run() == 1
    assert queued == [refund.pk]


def test_beat_runs_the_sweeper(settings) -> None:  # type: ignore[no-untyped-def]
    entry = settings.CELERY_BEAT_SCHEDULE["refunds-check-due"]
    assert entry["task"] == "refunds.tasks.refunds_check_due_task"


# --- The platform equation over random sequences -----------------------------------------------

steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("refund"),
            st.integers(min_value=0, max_value=1),  # which collection
            st.integers(min_value=1, max_value=8000),  # naira
            st.sampled_from(["00", "13", "14", "15"]),  # the sandbox's outcome
        ),
        st.tuples(st.just("send"), st.integers(min_value=0, max_value=5)),
        st.tuples(st.just("settle"), st.integers(min_value=0, max_value=1)),
        st.tuples(st.just("fund"), st.integers(min_value=1, max_value=5000)),
    ),
    min_size=1,
    max_size=14,
)


class _Rollback(Exception):
    pass


def _check_invariants(collections: list[CollectionTransaction]) -> None:
    balances = platform_balances(mode=Mode.TEST)
    assert balances.equation_holds
    for collection in collections:
        collection.refresh_from_db()
        live = Refund.objects.filter(collection=collection).exclude(
            status=RefundStatus.FAILED
        ).aggregate(total=Sum("amount"))["total"] or Decimal("0.00")
        assert collection.amount_refunded == live
        fees_returned = Refund.objects.filter(collection=collection).exclude(
            status=RefundStatus.FAILED
        ).aggregate(total=Sum("fee_returned"))["total"] or Decimal("0.00")
        assert fees_returned <= collection.transaction_fee
        assert collection.amount_refunded <= collection.amount_paid
    pending = Refund.objects.filter(status=RefundStatus.PENDING).aggregate(total=Sum("amount"))
    processed = Refund.objects.filter(status=RefundStatus.PROCESSED).aggregate(total=Sum("amount"))
    assert balances[PlatformAccount.REFUNDS_PENDING] == (pending["total"] or Decimal("0.00"))
    assert balances[PlatformAccount.REFUNDS] == (processed["total"] or Decimal("0.00"))
    for wallet in {c.merchant_id for c in collections}:
        entries = LedgerEntry.objects.filter(wallet__merchant_id=wallet, wallet__mode=Mode.TEST)
        deltas = entries.aggregate(total=Sum("available_delta"))["total"] or Decimal("0.00")
        assert wallet_of(collections[0].merchant).available_balance == deltas


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, returns_fee=st.booleans())
def test_platform_equation_holds_after_every_step(steps, returns_fee: bool) -> None:  # type: ignore[no-untyped-def]
    try:
        with override_settings(COLLECTION_REFUND_RETURNS_FEE=returns_fee), transaction.atomic():
            merchant = MerchantFactory()
            wallets_create_for_merchant(merchant=merchant)
            collections = [paid_collection(merchant=merchant) for _ in range(2)]
            _check_invariants(collections)
            for number, step in enumerate(steps):
                kind = step[0]
                if kind == "refund":
                    _, index, naira, kobo = step
                    # Above what is left, or the wallet does not cover it: refused.
                    with contextlib.suppress(ApplicationError):
                        refund_create(
                            merchant=merchant,
                            mode=Mode.TEST,
                            transaction_reference=collections[index].reference,
                            amount=Decimal(f"{naira}.{kobo}"),
                            reason="",
                            idempotency_key=f"k{number}",
                            initiated_by="test",
                        )
                elif kind == "send":
                    pending = list(
                        Refund.objects.filter(status=RefundStatus.PENDING).order_by("id")
                    )
                    if pending:
                        refund = pending[step[1] % len(pending)]
                        Refund.objects.filter(pk=refund.pk).update(next_check_at=None)
                        services.refund_send(refund_id=refund.pk)
                elif kind == "settle":
                    collection = collections[step[1]]
                    collection.refresh_from_db()
                    if collection.settlement_id is None:
                        collection_settle(collection)
                else:
                    wallet_fund(
                        wallet_id=wallet_of(merchant).pk,
                        amount=Decimal(step[1]),
                        reference=f"fund-{number}",
                    )
                _check_invariants(collections)
            raise _Rollback
    except _Rollback:
        pass
