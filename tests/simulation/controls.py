"""The simulator's rules for the merchant's payout controls: the approval threshold, payouts that
wait for a second key or for their scheduled time, approvals, cancels and the approval expiry
sweeper; and the invariant that a held payout never leaves home. Mixed into the machine like
``money_in``; the money invariants of ``machine.py`` are checked after every step as ever."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from core.exceptions import ApplicationError
from merchants.models import Mode
from merchants.services import secret_key_rotate
from payouts import services as payout_services
from payouts import tasks as payout_tasks
from payouts.models import Payout, PayoutApprovalStatus, PayoutStatus
from wallets.exceptions import InsufficientBalanceError, WalletInactiveError

if TYPE_CHECKING:
    from tests.simulation.machine import Environment
    from wallets.models import Wallet

THRESHOLDS = [None, Decimal("100.00"), Decimal("5000.00"), Decimal("250000.00")]


class ControlsRules:
    """Rules, an invariant and a drain step of the merchant's controls; the machine provides
    ``env``, the merchant and its wallet, ``_committed``, ``_log`` and ``_event``."""

    if TYPE_CHECKING:
        env: Environment
        merchant: Any
        wallet: Wallet
        payout_wallet_ids: list[int]
        _committed: Callable[..., Any]
        _log: Callable[[str], None]
        _event: Callable[[str], None]

    def _controls_open(self, creating_key_id: int) -> None:
        """Two keys: the one that creates payouts, and a second one that may approve them (both
        stay usable here: the services take a key's id)."""
        self.creating_key_id = creating_key_id
        self.approving_key_id = int(
            secret_key_rotate(merchant=self.merchant, mode=Mode.TEST).secret_key.pk
        )
        self.controlled: list[int] = []
        # Approval from NGN 5,000 to begin with, so sequences meet pending approvals early.
        payout_services.payout_approval_threshold_set(
            wallet_id=self.wallet.pk, approval_threshold=Decimal("5000.00"), actor="simulator"
        )

    @rule(threshold=st.sampled_from(THRESHOLDS))
    def set_approval_threshold(self, threshold: Decimal | None) -> None:
        self._committed(
            lambda: payout_services.payout_approval_threshold_set(
                wallet_id=self.wallet.pk, approval_threshold=threshold, actor="simulator"
            )
        )
        self._log(f"approval threshold {threshold}")

    @rule(
        amount=st.sampled_from([Decimal("50.00"), Decimal("6000.00"), Decimal("300000.00")]),
        minutes_ahead=st.sampled_from([None, 1, 30, 180]),
    )
    def create_controlled_payout(self, amount: Decimal, minutes_ahead: int | None) -> None:
        """A payout through a key (so the threshold applies), perhaps scheduled ahead."""
        scheduled_for = (
            None
            if minutes_ahead is None
            else self.env.clock.now() + timedelta(minutes=minutes_ahead)
        )
        key = f"sim-held-{len(self.controlled)}-{self.env.clock.now():%H%M%S}"
        try:
            payout = self._committed(
                lambda: payout_services.payout_create(
                    merchant=self.merchant,
                    mode=Mode.TEST,
                    account_number="0123456789",
                    bank_code="058",
                    amount=amount,
                    idempotency_key=key,
                    created_by_key_id=self.creating_key_id,
                    scheduled_for=scheduled_for,
                )
            ).payout
        except (InsufficientBalanceError, WalletInactiveError):
            self._log(f"create held {amount}: refused")
            return
        self.controlled.append(payout.pk)
        self._log(
            f"create {amount} (approval {payout.approval_status}, scheduled {scheduled_for}) "
            f"→ payout {payout.pk}"
        )
        self._event(f"controlled payout: approval {payout.approval_status}")
        if scheduled_for is not None:
            self._event("controlled payout: scheduled")

    @precondition(lambda self: bool(getattr(self, "controlled", None)))
    @rule(data=st.data(), same_key=st.booleans())
    def approve(self, data: st.DataObject, same_key: bool) -> None:
        payout_id = data.draw(st.sampled_from(self.controlled))
        before = Payout.objects.get(pk=payout_id)
        key_id = self.creating_key_id if same_key else self.approving_key_id
        try:
            self._committed(
                lambda: payout_services.payout_approve(
                    merchant=self.merchant,
                    mode=Mode.TEST,
                    payout_id=payout_id,
                    key_id=key_id,
                    actor="simulator",
                )
            )
        except ApplicationError as error:
            pending = (
                before.approval_status == PayoutApprovalStatus.PENDING
                and before.status == PayoutStatus.RESERVED
            )
            assert error.status == (403 if pending and same_key else 409), error.message
            self._event(f"approve refused {error.status}")
            return
        assert before.approval_status == PayoutApprovalStatus.PENDING and not same_key
        self._log(f"approve payout {payout_id}")
        self._event("approve")

    @precondition(lambda self: bool(getattr(self, "controlled", None)))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        payout_id = data.draw(st.sampled_from(self.controlled))
        before = Payout.objects.get(pk=payout_id)
        try:
            self._committed(
                lambda: payout_services.payout_cancel(
                    merchant=self.merchant, mode=Mode.TEST, payout_id=payout_id, actor="sim"
                )
            )
        except ApplicationError as error:
            assert error.status == 409
            assert not payout_services.payout_is_held(before, now=self.env.clock.now())
            self._event("cancel refused")
            return
        assert payout_services.payout_is_held(before, now=self.env.clock.now())
        self._log(f"cancel payout {payout_id}")
        self._event("cancel")

    @rule()
    def beat_approval_expiry(self) -> None:
        summary = self._committed(lambda: payout_tasks.payouts_approval_expire_task.run())
        if "0 expired" not in summary:
            self._event("approval expired")
        self._log(f"beat: {summary}")

    @invariant()
    def held_payouts_stay_home(self) -> None:
        """A payout awaiting approval or its time is reserved and the provider never saw it."""
        if not getattr(self, "controlled", None):
            return
        now = self.env.clock.now()
        for payout in Payout.objects.filter(pk__in=self.controlled):
            if payout_services.payout_is_held(payout, now=now) or (
                payout.approval_status == PayoutApprovalStatus.PENDING
            ):
                assert payout.status == PayoutStatus.RESERVED, f"payout {payout.pk} left"
                arrivals = self.env.provider.arrivals[payout.internal_reference]
                assert arrivals == 0, f"held payout {payout.pk} reached the provider"
            if payout.approval_status in (
                PayoutApprovalStatus.CANCELLED,
                PayoutApprovalStatus.EXPIRED,
            ):
                assert payout.status == PayoutStatus.FAILED

    def _controls_drain_round(self) -> None:
        """The drain: approvals left pending expire (the drain's hours pass 24 h)."""
        self.beat_approval_expiry()
