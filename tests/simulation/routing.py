"""The simulator's two payout providers: outages and slow answers as rules, and the invariants
of attempts, checked after every step.

* at most one attempt of a payout can succeed: the database's rule, and the providers' books
  (no payout has two transfers that succeeded or may still);
* each provider received each attempt reference at most once, and only references of attempts
  that went to it;
* no money released while any attempt might still succeed: a failed payout has no attempt that
  could succeed, and no provider holds a transfer of it that succeeded or is pending;
* a successful payout's money left through exactly one transfer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

from payouts.models import COULD_SUCCEED_OUTCOMES, PayoutAttempt, PayoutStatus
from tests.simulation.world import CrashPoint, ScriptedProvider, payout_truth, payout_truths

PROVIDER_NAMES = ("simulated", "simulated-b")


class RoutingRules:
    """Mixed into the machine: it provides ``env`` (with ``providers``), ``_log``, ``_event``
    and ``payout_wallet_ids``."""

    if TYPE_CHECKING:
        env: Any
        payout_wallet_ids: list[int]
        _log: Callable[[str], None]
        _event: Callable[[str], None]

    def _provider(self, name: str) -> ScriptedProvider:
        provider: ScriptedProvider = self.env.providers[name]
        return provider

    def providers_crash_next(self, crash: CrashPoint | None) -> None:
        """The next initiate, at whichever provider, dies at ``crash`` (a dispatch crash point;
        ``None`` disarms)."""
        dispatch_crash = crash in (
            CrashPoint.AFTER_CLAIM_BEFORE_PROVIDER,
            CrashPoint.AFTER_PROVIDER_BEFORE_SETTLEMENT,
        )
        for provider in self.env.providers.values():
            provider.crash_next_initiate = crash if dispatch_crash else None

    @rule(name=st.sampled_from(PROVIDER_NAMES), down=st.booleans())
    def provider_outage(self, name: str, down: bool) -> None:
        """A provider refuses every connection (or is back)."""
        self._provider(name).down = down
        self._log(f"provider {name} {'down' if down else 'up'}")
        self._event(f"provider {'down' if down else 'up'}")

    @rule(name=st.sampled_from(PROVIDER_NAMES), slow=st.booleans())
    def provider_slowness(self, name: str, slow: bool) -> None:
        """A provider answers after the service gave up (the transfer is made all the same)."""
        self._provider(name).slow = slow
        self._log(f"provider {name} {'slow' if slow else 'quick'}")

    def payout_attempts(self) -> dict[int, list[tuple[str, str, str]]]:
        """Each payout's attempts (provider, reference, outcome), oldest first."""
        attempts: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        rows = (
            PayoutAttempt.objects.filter(payout__wallet_id__in=self.payout_wallet_ids)
            .order_by("payout_id", "number")
            .values_list("payout_id", "provider_name", "reference", "outcome")
        )
        for payout_id, provider_name, reference, outcome in rows:
            attempts[payout_id].append((provider_name, reference, outcome))
        return attempts

    def payout_money_truth(self, payout_id: int) -> str | None:
        """What the providers' books say of the payout's money (across its attempts)."""
        attempts = self.payout_attempts().get(payout_id, [])
        return payout_truth(
            payout_truths(self.env.providers, [(name, ref) for name, ref, _o in attempts])
        )

    @invariant()
    def attempts_keep_the_money_rule(self) -> None:
        if not hasattr(self, "wallet"):
            return
        from payouts.models import Payout

        attempts = self.payout_attempts()
        sent_to: dict[str, set[str]] = defaultdict(set)
        for rows in attempts.values():
            for name, reference, _outcome in rows:
                sent_to[name].add(reference)
        for name, provider in self.env.providers.items():
            for reference, arrivals in provider.arrivals.items():
                assert arrivals <= 1, f"{name} received {reference} {arrivals} times"
                assert reference in sent_to[name], f"{name} received {reference}: no attempt"
        statuses = dict(
            Payout.objects.filter(wallet_id__in=self.payout_wallet_ids).values_list("pk", "status")
        )
        for payout_id, rows in attempts.items():
            name = f"payout {payout_id}"
            open_attempts = [row for row in rows if row[2] in COULD_SUCCEED_OUTCOMES]
            assert len(open_attempts) <= 1, f"{name}: two attempts could succeed: {rows}"
            truths = payout_truths(self.env.providers, [(p, ref) for p, ref, _o in rows])
            live = [truth for truth in truths if truth in ("success", "pending")]
            assert len(live) <= 1, f"{name}: two transfers moved or may move money: {truths}"
            status = statuses.get(payout_id)
            if status == PayoutStatus.FAILED:
                assert not open_attempts, f"{name}: released while {open_attempts} could succeed"
                assert not live, f"{name}: released while a transfer is {live}"
            if status == PayoutStatus.SUCCESSFUL:
                assert truths.count("success") == 1, f"{name}: successful, books say {truths}"
        if len(attempts) > 0 and any(len(rows) > 1 for rows in attempts.values()):
            self._event("a payout with several attempts")
