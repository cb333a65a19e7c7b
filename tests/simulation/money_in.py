"""Money in for the simulator (mixed into ``MoneyCoreMachine``): collections paid with and
without a split, refunded (partly, wholly, two at once, refused, failing at the provider),
settled by runs that may crash after their claim or run twice, and the subaccount shares paid
out from the platform's wallet through the same payout machinery, provider and broker.

After every step the platform ledger's equation holds and each figure agrees with the rows it
accounts for; at the end, once the world is drained, every refund is final, every paid
collection settled once and every share paid or still owed because its payout failed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, Subquery, Sum
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from collections_app import services as collection_services
from collections_app.models import CollectionTransaction, PaymentStatus, TransactionSplitEntry
from core.exceptions import ApplicationError, ConflictError
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.selectors import payout_fee_calculate
from refunds import tasks as refund_tasks
from refunds.models import Refund, RefundStatus
from refunds.services import refund_create
from settlements import tasks as settlement_tasks
from settlements.models import PlatformAccount, PlatformLedgerEntry, Settlement, SettlementShare
from settlements.platform_ledger import platform_balances
from settlements.services import platform_wallet_get, settlement_run, settlements_run
from settlements.services import run as settlement_run_module
from tests.payment_items.factories import (
    PaymentItemFactory,
    SubaccountFactory,
    TransactionSplitFactory,
    TransactionSplitShareFactory,
)
from tests.simulation.world import Script, SimulatedCrash
from wallets.exceptions import InsufficientBalanceError
from wallets.models import COLLECTION_CREDIT_TYPES, LedgerEntry, LedgerEntryType, Wallet
from webhooks.models import Event, EventType

if TYPE_CHECKING:
    from tests.simulation.machine import Environment

ZERO = Decimal("0.00")
PRICE = Decimal("7000.00")
MONEY_IN_TASKS = (
    refund_tasks.refund_send_task,
    settlement_tasks.settlement_run_task,
    settlement_tasks.settlement_shares_pay_task,
)
# Where a settlement run may die after its claim (a name in ``settlements.services.run``).
SETTLEMENT_CRASH_POINTS = (
    "_claim_totals",
    "_refund_deductions_take",
    "wallet_collection_credit",
    "platform_post",
    "settlement_completed_event_record",
)
# The sandbox refund provider's outcome by the amount's kobo (docs/sandbox.md).
REFUND_KOBO = {"13": "fails at once", "14": "pending, then fails", "15": "pending, then processed"}
_numbers = itertools.count(1)


def _total(queryset: Any, field: str) -> Decimal:
    return queryset.aggregate(total=Sum(field))["total"] or ZERO


class MoneyInRules:
    """Rules, invariants and drain steps of money in; the machine provides ``env``, the
    merchant and its wallet, ``_committed``, ``_create``, ``_log`` and ``_event``."""

    if TYPE_CHECKING:
        env: Environment
        merchant: Any
        item: Any
        wallet: Wallet
        payout_wallet_ids: list[int]
        _committed: Callable[..., Any]
        _wallet_exact: Callable[[int], None]
        _create: Callable[..., Payout | None]
        _log: Callable[[str], None]
        _event: Callable[[str], None]

    def _money_in_open(self) -> None:
        """A subaccount split of the merchant's second item (10 % and 2.5 %), and the platform's
        wallet, whose share payouts the machine's payout checks cover too."""
        first, second = (
            SubaccountFactory(merchant=self.merchant, mode=Mode.TEST) for _ in range(2)
        )
        self.subaccounts = [first, second]
        split = TransactionSplitFactory(merchant=self.merchant, mode=Mode.TEST)
        TransactionSplitShareFactory(split=split, subaccount=first, share=Decimal("10.00"))
        TransactionSplitShareFactory(split=split, subaccount=second, share=Decimal("2.50"))
        self.split_item = PaymentItemFactory(
            merchant=self.merchant, mode=Mode.TEST, amount=PRICE, transaction_split=split
        )
        self.platform_wallet = platform_wallet_get(mode=Mode.TEST)
        self.payout_wallet_ids.append(self.platform_wallet.pk)
        self.settled_seen: dict[int, int] = {}
        self.paid_ids: list[int] = []
        self.customer_pays(split="item", lose_queued=False)  # something to refund and settle

    # --- collections paid ------------------------------------------------------------------

    @rule(split=st.sampled_from(["none", "item", "item", "subaccounts"]), lose_queued=st.booleans())
    def customer_pays(self, split: str, lose_queued: bool) -> None:
        """A customer pays at checkout: no split, the item's split, or the whole amount shared
        between the subaccounts named at initialization."""
        item = self.item if split == "none" else self.split_item
        subaccounts = None
        if split == "subaccounts":
            subaccounts = [
                collection_services.SubaccountAmount(account_code=sub.account_code, amount=amount)
                for sub, amount in zip(self.subaccounts, (5000, 2000), strict=True)
            ]
        result = self._committed(
            lambda: collection_services.transaction_initialize(
                merchant=self.merchant,
                mode=Mode.TEST,
                payment_item_id=item.pk,
                transaction_reference=f"sim-paid-{next(_numbers)}",
                channel="card",
                amount=PRICE,
                customer_info=collection_services.CustomerInfo(
                    email="ada@example.com",
                    phone_number="08031234567",
                    first_name="Ada",
                    last_name="Obi",
                ),
                callback_url="https://merchant.example.com/payments/callback",
                subaccounts=subaccounts,
            )
        )
        collection = result.transaction
        confirmed = self._committed(
            lambda: collection_services.transaction_confirm(
                collection=collection, outcome=PaymentStatus.PAID, source="checkout"
            ),
            lose_queued=lose_queued,
        )
        assert confirmed.applied
        self._log(f"customer pays collection {collection.pk} (split: {split})")
        self._event(f"collection paid (split: {split})")
        self.paid_ids.append(collection.pk)

    # --- refunds ---------------------------------------------------------------------------

    def _refund_snapshot(self, collection_id: int) -> tuple[Any, ...]:
        wallet = Wallet.objects.values("available_balance", "reserved_balance").get(
            pk=self.wallet.pk
        )
        return (
            wallet["available_balance"],
            wallet["reserved_balance"],
            CollectionTransaction.objects.values_list("amount_refunded", flat=True).get(
                pk=collection_id
            ),
            Refund.objects.filter(merchant=self.merchant).count(),
            PlatformLedgerEntry.objects.count(),
            LedgerEntry.objects.filter(wallet_id=self.wallet.pk).count(),
        )

    def _refund_expected(self, collection_id: int, amount: Decimal | None) -> str:
        """What the refund service must answer: "created", "exceeds" or "insufficient" (the
        fee is not returned: ``COLLECTION_REFUND_RETURNS_FEE`` is off)."""
        collection = CollectionTransaction.objects.get(pk=collection_id)
        left = collection.amount_paid - collection.amount_refunded
        refund = left if amount is None else amount
        if refund > left or refund <= 0:
            return "exceeds"
        deducted = ZERO
        if collection.settlement_id is None:
            owed = platform_balances(mode=Mode.TEST, merchant_id=self.merchant.pk)[
                PlatformAccount.OWED_MERCHANTS
            ]
            deducted = min(refund, max(owed, ZERO))
        available = Wallet.objects.values_list("available_balance", flat=True).get(
            pk=self.wallet.pk
        )
        return "insufficient" if refund - deducted > available else "created"

    def _refund(self, collection_id: int, amount: Decimal | None, key: str) -> Refund | None:
        expected = self._refund_expected(collection_id, amount)
        before = self._refund_snapshot(collection_id)
        reference = CollectionTransaction.objects.values_list("reference", flat=True).get(
            pk=collection_id
        )
        try:
            result = self._committed(
                lambda: refund_create(
                    merchant=self.merchant,
                    mode=Mode.TEST,
                    transaction_reference=reference,
                    amount=amount,
                    reason="",
                    idempotency_key=key,
                    initiated_by="simulator",
                )
            )
        except InsufficientBalanceError:
            assert expected == "insufficient", (
                f"refund {key} {amount}: refused, expected {expected}"
            )
            outcome = "insufficient balance"
        except ApplicationError as error:
            assert error.status == 400 and expected == "exceeds", (
                f"refund {key} {amount}: {error} (expected {expected})"
            )
            outcome = "more than refundable"
        else:
            assert expected == "created", f"refund {key} {amount} created; expected {expected}"
            assert not result.duplicate
            self._log(f"refund {result.refund.refund_id} of {collection_id}: {amount or 'all'}")
            self._event("refund created")
            return result.refund
        assert self._refund_snapshot(collection_id) == before, f"refused refund {key} moved money"
        self._log(f"refund of {collection_id} for {amount}: refused ({outcome})")
        self._event(f"refund refused: {outcome}")
        return None

    @precondition(lambda self: bool(getattr(self, "paid_ids", None)))
    @rule(
        data=st.data(),
        kind=st.sampled_from(["whole", "default", "part", "part", "magic", "magic", "too much"]),
        replay=st.booleans(),
    )
    def refund(self, data: st.DataObject, kind: str, replay: bool) -> None:
        collection_id = data.draw(st.sampled_from(self.paid_ids), label="collection")
        collection = CollectionTransaction.objects.get(pk=collection_id)
        left = collection.amount_paid - collection.amount_refunded
        amount: Decimal | None
        if kind == "default":
            amount = None
        elif kind == "whole":
            amount = left
        elif kind == "too much":
            amount = left + data.draw(st.sampled_from([Decimal("0.01"), Decimal("5000.00")]))
        else:
            naira = data.draw(st.integers(min_value=0, max_value=max(int(left) - 1, 0)))
            kobo = data.draw(st.sampled_from(list(REFUND_KOBO) if kind == "magic" else ["37"]))
            amount = Decimal(f"{naira}.{kobo}")
        key = f"sim-refund-{next(_numbers)}"
        refund = self._refund(collection_id, amount, key)
        if kind == "magic" and amount is not None:
            self._event(f"refund asked: {REFUND_KOBO[str(amount)[-2:]]}")
        if refund is None or not replay:
            return
        before = self._refund_snapshot(collection_id)
        again = self._committed(
            lambda: refund_create(
                merchant=self.merchant,
                mode=Mode.TEST,
                transaction_reference=collection.reference,
                amount=amount,
                reason="",
                idempotency_key=key,
                initiated_by="simulator",
            )
        )
        assert again.duplicate and again.refund.pk == refund.pk, f"refund key {key} replayed"
        try:
            refund_create(
                merchant=self.merchant,
                mode=Mode.TEST,
                transaction_reference=collection.reference,
                amount=(amount or left) + Decimal("1.00"),
                reason="",
                idempotency_key=key,
                initiated_by="simulator",
            )
        except ConflictError:
            pass
        else:
            raise AssertionError(f"refund key {key} reused with another amount was accepted")
        assert self._refund_snapshot(collection_id) == before, f"replay of {key} moved money"
        self._event("refund replayed")

    @precondition(lambda self: bool(getattr(self, "paid_ids", None)))
    @rule(data=st.data())
    def refunds_at_once(self, data: st.DataObject) -> None:
        """Two refunds with different keys whose sum exceeds what is left: the wallet and the
        collection locks serialize them, so at most what is refundable is refunded."""
        collection_id = data.draw(st.sampled_from(self.paid_ids), label="collection")
        collection = CollectionTransaction.objects.get(pk=collection_id)
        left_kobo = int((collection.amount_paid - collection.amount_refunded) * 100)
        if left_kobo < 2:
            return
        first = data.draw(st.integers(min_value=1, max_value=left_kobo - 1))
        second = data.draw(st.integers(min_value=left_kobo - first + 1, max_value=left_kobo))
        made = [
            self._refund(collection_id, Decimal(kobo).scaleb(-2), f"sim-refund-{next(_numbers)}")
            for kobo in (first, second)
        ]
        refunded = sum((r.amount for r in made if r is not None), ZERO)
        assert refunded <= Decimal(left_kobo).scaleb(-2), "two refunds took more than was left"
        self._event(f"refunds at once: {sum(r is not None for r in made)} of 2 made")

    @rule()
    def merchant_pays_out_everything(self) -> None:
        """Leaves the wallet (nearly) empty, so a settled collection's refund may not be
        covered."""
        available = Wallet.objects.values_list("available_balance", flat=True).get(
            pk=self.wallet.pk
        )
        for fee in (Decimal("10.00"), Decimal("25.00"), Decimal("50.00")):
            amount = available - fee
            if amount > 0 and payout_fee_calculate(amount=amount) == fee:
                self._create(key=f"sim-all-{next(_numbers)}", account="0123456789", amount=amount)
                return

    @rule()
    def beat_refund_sweeper(self) -> None:
        count = self._committed(lambda: refund_tasks.refunds_check_due_task.run())
        self._log(f"beat: {count} refund(s) queued")

    # --- settlements -----------------------------------------------------------------------

    def _settle(self, *, via: str, crash: str | None) -> bool:
        """One run; True when it died (then nothing of it remains)."""
        fired: list[str] = []
        original = getattr(settlement_run_module, crash) if crash else None

        def dies(*args: Any, **kwargs: Any) -> Any:
            assert crash is not None and original is not None
            setattr(settlement_run_module, crash, original)
            fired.append(crash)
            raise SimulatedCrash(f"settlement run died in {crash}")

        if crash:
            setattr(settlement_run_module, crash, dies)
        settled_before = set(self.settled_seen.items())
        count_before = Settlement.objects.filter(merchant=self.merchant).count()
        try:
            if via == "run":
                self._committed(
                    lambda: settlement_run(merchant_id=self.merchant.pk, mode=Mode.TEST)
                )
            else:
                self._committed(
                    lambda: settlements_run(modes=(Mode.TEST,), merchant_id=self.merchant.pk)
                )
        except SimulatedCrash as crashed:
            assert Settlement.objects.filter(merchant=self.merchant).count() == count_before
            self.money_in_adds_up()
            assert set(self.settled_seen.items()) == settled_before, "a crashed run settled"
            self._log(f"settlement crashed ({crashed}); rolled back")
            self._event("settlement crash")
            return True
        finally:
            if crash and not fired:
                setattr(settlement_run_module, crash, original)
        count = Settlement.objects.filter(merchant=self.merchant).count()
        self._log(f"settlement run ({via}): {count - count_before} settlement(s)")
        self._event("settlement" if count > count_before else "settlement: nothing due")
        left = CollectionTransaction.objects.filter(
            merchant=self.merchant,
            payment_status=PaymentStatus.PAID,
            settlement=None,
            paid_at__lt=self.env.clock.now(),
        )
        assert not left.exists(), f"due but not settled: {list(left.values_list('pk'))}"
        return False

    @rule(
        via=st.sampled_from(["run", "runs"]),
        crash=st.sampled_from([None, None, *SETTLEMENT_CRASH_POINTS]),
        twice=st.booleans(),
    )
    def settle_now(self, via: str, crash: str | None, twice: bool) -> None:
        """The test helper's run (or one merchant's), possibly dying after its claim; run
        again at once, it finds nothing left."""
        self.env.clock.advance(timedelta(seconds=1))
        if self._settle(via=via, crash=crash) and twice:
            self._settle(via=via, crash=None)  # the next run settles what the crash left
            self._event("settlement after a crash")
        if twice:
            count = Settlement.objects.filter(merchant=self.merchant).count()
            self._settle(via=via, crash=None)
            assert Settlement.objects.filter(merchant=self.merchant).count() == count
            self._event("settlement run twice")

    @rule()
    def beat_settlements_due(self) -> None:
        queued = self._committed(lambda: settlement_tasks.settlements_run_due_task.run())
        self._log(f"beat: {queued} settlement run(s) queued")

    @rule()
    def beat_share_sweeper(self) -> None:
        summary = self._committed(lambda: settlement_tasks.settlement_shares_sweep_task.run())
        self._log(f"beat: {summary}")
        if not summary.startswith("0 "):
            self._event("share sweeper created payouts")

    @rule(
        index=st.sampled_from([0, 1]),
        script=st.sampled_from([Script.FAILED, Script.REJECTED, *Script]),
    )
    def subaccount_bank_will(self, index: int, script: Script) -> None:
        """How the provider treats the next share payouts to one subaccount's bank account."""
        self.env.provider.account_scripts[self.subaccounts[index].account_number] = script
        self._log(f"transfers to subaccount {index}: {script}")

    # --- invariants ------------------------------------------------------------------------

    def _money_in_fingerprint(self) -> tuple[Any, ...]:
        """Changes whenever money in moved (one statement): the newest platform posting,
        money-in wallet entry (any on the platform's wallet), settlement and refund update, and
        which collections are settled."""

        def newest(rows: Any, field: str) -> Subquery:
            return Subquery(rows.order_by(f"-{field}").values(field)[:1])

        money_in_entries = LedgerEntry.objects.filter(
            Q(
                wallet_id=self.wallet.pk,
                entry_type__in=(*COLLECTION_CREDIT_TYPES, LedgerEntryType.REFUND),
            )
            | Q(wallet_id=self.platform_wallet.pk)
        )

        settled = (
            CollectionTransaction.objects.filter(merchant=self.merchant)
            .order_by()
            .values("merchant")
            .annotate(n=Sum("settlement_id"))
            .values("n")[:1]
        )
        row = Wallet.objects.filter(pk=self.wallet.pk).values_list(
            newest(PlatformLedgerEntry.objects.filter(merchant=self.merchant), "id"),
            newest(money_in_entries, "id"),
            newest(Settlement.objects.filter(merchant=self.merchant), "id"),
            newest(Refund.objects.filter(merchant=self.merchant), "updated_at"),
            Subquery(settled),
        )
        return tuple(row.get())

    @invariant()
    def steps_are_counted(self) -> None:
        """Invariants run once after the opening and once after every step."""
        self.env.stats["steps run (with each sequence's opening)"] += 1

    @invariant()
    def money_in_adds_up(self) -> None:
        """The platform equation after every step; the rest whenever money in moved."""
        if not hasattr(self, "platform_wallet"):
            return
        balances = platform_balances(mode=Mode.TEST)
        assert balances.equation_holds, f"platform equation broken: {balances.by_account}"
        fingerprint = self._money_in_fingerprint()
        if fingerprint == getattr(self, "_money_in_checked", None):
            return
        self._money_in_checked = fingerprint
        self._wallet_exact(self.platform_wallet.pk)
        mine = platform_balances(mode=Mode.TEST, merchant_id=self.merchant.pk)
        owed = mine[PlatformAccount.OWED_MERCHANTS]
        assert owed >= 0, f"owed to the merchant {owed} < 0"
        for account in (PlatformAccount.REFUNDS_PENDING, PlatformAccount.OWED_SUBACCOUNTS):
            assert balances[account] >= 0, f"{account} {balances[account]} < 0"
        # Each paid collection: settled at most once, refunds within what was paid.
        unsettled_owed = ZERO
        unsettled_shares = ZERO
        collections = (
            CollectionTransaction.objects.filter(merchant=self.merchant)
            .annotate(
                refunded=Sum("refunds__amount", filter=~Q(refunds__status=RefundStatus.FAILED)),
            )
            .values_list(
                "pk", "payment_status", "settlement_id", "amount_paid", "transaction_fee",
                "amount_refunded", "refunded",
            )
        )  # fmt: skip
        shares = dict(
            TransactionSplitEntry.objects.filter(transaction__merchant=self.merchant)
            .values("transaction_id")
            .annotate(total=Sum("share"))
            .values_list("transaction_id", "total")
        )
        for pk, status, settlement_id, paid, fee, refunded, refund_sum in collections:
            name = f"collection {pk}"
            assert (refund_sum or ZERO) == refunded <= paid, (
                f"{name}: refunds {refund_sum}, amount_refunded {refunded}, paid {paid}"
            )
            if settlement_id is not None:
                assert status == PaymentStatus.PAID, f"{name}: settled but {status}"
                seen = self.settled_seen.setdefault(pk, settlement_id)
                assert seen == settlement_id, f"{name}: settled by {seen}, then {settlement_id}"
            else:
                assert pk not in self.settled_seen, f"{name}: its settlement was undone"
                if status == PaymentStatus.PAID:
                    unsettled_owed += paid - fee - shares.get(pk, ZERO)
                    unsettled_shares += shares.get(pk, ZERO)
        refunds = Refund.objects.filter(merchant=self.merchant)
        waiting = _total(
            refunds.filter(settlement__isnull=True).exclude(status=RefundStatus.FAILED),
            "deducted_from_settlement",
        )
        assert owed == unsettled_owed - waiting, (
            f"owed to the merchant {owed} ≠ unsettled {unsettled_owed} - deductions {waiting}"
        )
        by_status = dict(
            refunds.values("status").annotate(total=Sum("amount")).values_list("status", "total")
        )
        assert mine[PlatformAccount.REFUNDS_PENDING] == by_status.get(RefundStatus.PENDING, ZERO)
        assert mine[PlatformAccount.REFUNDS] == by_status.get(RefundStatus.PROCESSED, ZERO)
        # The merchant's wallet: settlements credited once each, refunds debited and put back.
        entries = dict(
            LedgerEntry.objects.filter(wallet_id=self.wallet.pk)
            .values("entry_type")
            .annotate(total=Sum("amount"))
            .values_list("entry_type", "total")
        )
        settlements = Settlement.objects.filter(merchant=self.merchant)
        nets = settlements.aggregate(net=Sum("net"), n=Count("id"), entries=Count("ledger_entry"))
        assert (nets["net"] or ZERO) == entries.get(LedgerEntryType.SETTLEMENT, ZERO), (
            f"settlement nets {nets['net']} ≠ settlement entries"
        )
        credits = (
            entries.get(LedgerEntryType.SETTLEMENT, ZERO)
            + entries.get(LedgerEntryType.REFUND_REVERSAL, ZERO)
            - entries.get(LedgerEntryType.REFUND, ZERO)
        )
        assert mine[PlatformAccount.MERCHANT_CREDITS] == credits, (
            f"merchant credits {mine[PlatformAccount.MERCHANT_CREDITS]} ≠ wallet's {credits}"
        )
        # The platform's wallet holds the shares credited less the share payouts paid.
        share_rows = SettlementShare.objects.filter(settlement__mode=Mode.TEST)
        credited = _total(share_rows, "amount")
        paid_shares = _total(share_rows.filter(payout__status=PayoutStatus.SUCCESSFUL), "amount")
        platform = Wallet.objects.values("available_balance", "reserved_balance").get(
            pk=self.platform_wallet.pk
        )
        assert platform["available_balance"] + platform["reserved_balance"] == (
            credited - paid_shares
        ), f"platform wallet {platform} ≠ shares {credited} - paid {paid_shares}"
        assert balances[PlatformAccount.OWED_SUBACCOUNTS] == unsettled_shares + credited - (
            paid_shares
        ), "owed to subaccounts ≠ unsettled shares + shares not paid"
        repeated = (
            Event.objects.filter(
                merchant=self.merchant,
                event_type__in=[
                    EventType.REFUND_PENDING,
                    EventType.REFUND_PROCESSED,
                    EventType.REFUND_FAILED,
                    EventType.SETTLEMENT_COMPLETED,
                ],
            )
            .values("event_type", "reference")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        assert not repeated.exists(), f"an event recorded twice: {list(repeated)}"

    # --- the end ---------------------------------------------------------------------------

    def _money_in_drain_round(self) -> None:
        self.beat_settlements_due()
        self.beat_refund_sweeper()
        self.beat_share_sweeper()

    def _money_in_busy(self) -> bool:
        return (
            Refund.objects.filter(merchant=self.merchant, status=RefundStatus.PENDING).exists()
            or CollectionTransaction.objects.filter(
                merchant=self.merchant, payment_status=PaymentStatus.PAID, settlement=None
            ).exists()
            or SettlementShare.objects.filter(payout=None).exists()
        )

    def _money_in_final_checks(self) -> None:
        self._money_in_checked = None
        self.money_in_adds_up()
        pending = Refund.objects.filter(merchant=self.merchant, status=RefundStatus.PENDING)
        assert not pending.exists(), f"refunds never final: {list(pending.values_list('pk'))}"
        unsettled = CollectionTransaction.objects.filter(
            merchant=self.merchant, payment_status=PaymentStatus.PAID, settlement=None
        )
        assert not unsettled.exists(), f"paid, never settled: {list(unsettled.values_list('pk'))}"
        failed = ZERO
        for share in SettlementShare.objects.select_related("payout"):
            assert share.payout is not None, f"share {share.pk}: no payout"
            assert share.payout.status in (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED)
            if share.payout.status == PayoutStatus.FAILED:
                failed += share.amount
            self._event(f"share payout {share.payout.status}")
        owed = platform_balances(mode=Mode.TEST)[PlatformAccount.OWED_SUBACCOUNTS]
        assert owed == failed, f"owed to subaccounts {owed} ≠ shares whose payout failed {failed}"
        for status in Refund.objects.filter(merchant=self.merchant).values_list(
            "status", flat=True
        ):
            self._event(f"refund {status}")
        for net, refunds in Settlement.objects.filter(merchant=self.merchant).values_list(
            "net", "refunds_deducted"
        ):
            self._event("settled with refunds deducted" if refunds else "settled")
            assert net >= 0
