"""The circuit breaker of each payout provider.

A provider's health is read (``payouts.selectors.provider_attempt_counts``) from its attempts of
the last ``PAYOUT_CIRCUIT_WINDOW_SECONDS`` (counted from when its circuit last closed, if later):
how many there were, and the rates of timeouts (``unknown``), sends that never reached it
(``not_sent``) and refusals (``rejected``), as the attempts stand now. When at least
``PAYOUT_CIRCUIT_MIN_ATTEMPTS`` were answered and the three together reach
``PAYOUT_CIRCUIT_FAILURE_RATE``, the circuit opens: routing (``payouts.services.routing``) skips
the provider for ``PAYOUT_CIRCUIT_COOLDOWN_SECONDS``. Then it is half-open: one attempt (the
probe) goes to it; the probe's answer closes the circuit or opens it again. A probe that never
answers is given up after the dispatch claim timeout, and another taken.

Circuit rows are written in the transactions that claim attempts (a probe taken) and apply
their answers (opened, closed), after the payouts they lock. Sandbox providers never open: their
failures come from one merchant's test switch, and a shared circuit would carry that switch
into every other merchant's routing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from payouts.models import AttemptOutcome, CircuitState, PayoutProviderCircuit
from payouts.providers.sandbox import SANDBOX_PROVIDER_NAMES
from payouts.selectors import attempts_counted_since, provider_attempt_counts
from payouts.services.timing import dispatch_claim_timeout, seconds_setting

# What counts against a provider: it timed out, could not be reached, or refused.
BAD_OUTCOMES: tuple[str, ...] = (
    AttemptOutcome.UNKNOWN,
    AttemptOutcome.NOT_SENT,
    AttemptOutcome.REJECTED,
)
# What shows a probe reached a working provider.
GOOD_OUTCOMES: tuple[str, ...] = (
    AttemptOutcome.SUCCESSFUL,
    AttemptOutcome.PENDING,
    AttemptOutcome.FAILED,
)


def circuit_cooldown() -> timedelta:
    return seconds_setting("PAYOUT_CIRCUIT_COOLDOWN", 60)


def circuit_min_attempts() -> int:
    return int(getattr(settings, "PAYOUT_CIRCUIT_MIN_ATTEMPTS", 10))


def circuit_failure_rate() -> float:
    return float(getattr(settings, "PAYOUT_CIRCUIT_FAILURE_RATE", 0.5))


@dataclass
class CircuitView:
    """The circuits as one dispatch round sees them: ``blocked`` providers are skipped;
    a provider in ``probes`` may take one attempt (its probe) if the round wins it."""

    blocked: set[str] = field(default_factory=set)
    probes: set[str] = field(default_factory=set)
    now: datetime | None = None

    def usable(self, provider_name: str) -> bool:
        return provider_name not in self.blocked

    def take(self, provider_name: str) -> None:
        """The round sends an attempt to ``provider_name``: a half-open provider's probe is
        taken (at most one round wins it; the others see the provider blocked)."""
        if provider_name not in self.probes:
            return
        self.probes.discard(provider_name)
        self.blocked.add(provider_name)
        now = self.now or timezone.now()
        PayoutProviderCircuit.objects.filter(provider_name=provider_name).update(
            state=CircuitState.HALF_OPEN, probe_started_at=now, updated_at=now
        )


def circuits_view(*, now: datetime) -> CircuitView:
    """Which providers a round skips (open and cooling down, or half-open with a probe out)
    and which may take a probe, locking the rows of those that may (skipping any another
    round holds: that round takes the probe). One read while every circuit is closed."""
    view = CircuitView(now=now)
    rows = list(
        PayoutProviderCircuit.objects.exclude(state=CircuitState.CLOSED).values_list(
            "provider_name", "state", "opened_at", "probe_started_at"
        )
    )
    due = {
        name
        for name, state, opened_at, probe_started_at in rows
        if (
            state == CircuitState.OPEN
            and (opened_at is None or opened_at <= now - circuit_cooldown())
        )
        or (
            state == CircuitState.HALF_OPEN
            and (probe_started_at is None or probe_started_at <= now - dispatch_claim_timeout())
        )
    }
    if due and transaction.get_connection().in_atomic_block:
        due = set(
            PayoutProviderCircuit.objects.filter(provider_name__in=due)
            .select_for_update(skip_locked=True)
            .values_list("provider_name", flat=True)
        )
    else:
        due = set()
    for name, *_rest in rows:
        (view.probes if name in due else view.blocked).add(name)
    return view


def _circuit_row(provider_name: str) -> PayoutProviderCircuit:
    circuit = (
        PayoutProviderCircuit.objects.select_for_update()
        .filter(provider_name=provider_name)
        .first()
    )
    if circuit is not None:
        return circuit
    try:
        with transaction.atomic():
            return PayoutProviderCircuit.objects.create(provider_name=provider_name)
    except IntegrityError:
        return PayoutProviderCircuit.objects.select_for_update().get(provider_name=provider_name)


def circuits_record(*, outcomes: Iterable[tuple[str, str]], now: datetime) -> None:
    """Brings the circuits of the providers that just answered (``(provider, attempt
    outcome)`` pairs, already written) up to date, in the caller's transaction: a half-open
    provider's probe answer closes or reopens it; a closed provider whose window crossed the
    failure rate opens. A round that saw no bad answer and no half-open provider reads one row
    set and writes nothing."""
    by_provider: dict[str, list[str]] = {}
    for provider_name, outcome in outcomes:
        if provider_name in SANDBOX_PROVIDER_NAMES:
            continue  # a sandbox's failures are one merchant's switch: never everyone's route
        by_provider.setdefault(provider_name, []).append(outcome)
    if not by_provider:
        return
    states = dict(
        PayoutProviderCircuit.objects.filter(provider_name__in=list(by_provider)).values_list(
            "provider_name", "state"
        )
    )
    for provider_name in sorted(by_provider):
        answered = by_provider[provider_name]
        bad = any(outcome in BAD_OUTCOMES for outcome in answered)
        good = any(outcome in GOOD_OUTCOMES for outcome in answered)
        state = states.get(provider_name, CircuitState.CLOSED)
        if state == CircuitState.OPEN or (state == CircuitState.CLOSED and not bad):
            continue
        circuit = _circuit_row(provider_name)
        if circuit.state == CircuitState.HALF_OPEN:
            if good:
                circuit.state, circuit.closed_at = CircuitState.CLOSED, now
                circuit.opened_at = circuit.probe_started_at = None
            elif bad:
                circuit.state, circuit.opened_at, circuit.probe_started_at = (
                    CircuitState.OPEN,
                    now,
                    None,
                )
            circuit.save()
            continue
        if circuit.state != CircuitState.CLOSED:
            continue
        since = {provider_name: attempts_counted_since(circuit, now=now)}
        health = provider_attempt_counts([provider_name], since=since)[provider_name]
        failures = health["unknown"] + health["not_sent"] + health["rejected"]
        if (
            health["answered"] >= circuit_min_attempts()
            and failures / health["answered"] >= circuit_failure_rate()
        ):
            circuit.state, circuit.opened_at = CircuitState.OPEN, now
            circuit.save()
