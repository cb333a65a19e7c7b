"""``payouts.services.circuits``: a provider's circuit opens when its recent attempts fail too
often, routing skips it while open, one probe goes to it after the cool-down, and the probe's
answer closes or reopens it; the back office reads each provider's health."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from payouts.models import (
    AttemptOutcome,
    CircuitState,
    PayoutAttempt,
    PayoutProviderCircuit,
    PayoutStatus,
)
from payouts.selectors import provider_health_list
from payouts.services import payout_dispatch
from payouts.services.circuits import circuits_record, circuits_view
from payouts.services.routing import RoutingTable
from tests.payouts.factories import PayoutAttemptFactory, PayoutFactory
from tests.payouts.helpers import reload
from wallets.models import Wallet

pytestmark = pytest.mark.django_db


@pytest.fixture
def circuit_settings(settings: Any) -> Any:
    settings.PAYOUT_CIRCUIT_WINDOW = timedelta(minutes=5)
    settings.PAYOUT_CIRCUIT_MIN_ATTEMPTS = 4
    settings.PAYOUT_CIRCUIT_FAILURE_RATE = 0.5
    settings.PAYOUT_CIRCUIT_COOLDOWN = timedelta(seconds=60)
    settings.PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": ["sandbox-b"], "live": []}
    return settings


def _attempts(wallet: Wallet, provider_name: str, outcomes: list[str]) -> None:
    for outcome in outcomes:
        payout = PayoutFactory(wallet=wallet, status=PayoutStatus.PROCESSING)
        PayoutAttemptFactory(payout=payout, provider_name=provider_name, outcome=outcome)


def _state(provider_name: str) -> str | None:
    circuit = PayoutProviderCircuit.objects.filter(provider_name=provider_name).first()
    return None if circuit is None else circuit.state


def test_a_provider_failing_at_the_threshold_opens(test_wallet: Wallet, circuit_settings) -> None:
    _attempts(test_wallet, "paystack", ["not_sent", "unknown", "successful", "rejected"])

    circuits_record(outcomes=[("paystack", "rejected")], now=timezone.now())

    assert _state("paystack") == CircuitState.OPEN


def test_fewer_attempts_than_the_minimum_never_open(test_wallet: Wallet, circuit_settings) -> None:
    _attempts(test_wallet, "paystack", ["not_sent", "not_sent", "not_sent"])

    circuits_record(outcomes=[("paystack", "not_sent")], now=timezone.now())

    assert _state("paystack") in (None, CircuitState.CLOSED)


def test_a_failure_rate_below_the_threshold_stays_closed(
    test_wallet: Wallet, circuit_settings
) -> None:
    _attempts(test_wallet, "paystack", ["not_sent", "successful", "successful", "pending"])

    circuits_record(outcomes=[("paystack", "not_sent")], now=timezone.now())

    assert _state("paystack") in (None, CircuitState.CLOSED)


def test_an_open_circuit_sends_payouts_to_the_next_provider(
    funded_wallet: Wallet, create_payout: Callable[..., Any], circuit_settings
) -> None:
    PayoutProviderCircuit.objects.create(
        provider_name="sandbox", state=CircuitState.OPEN, opened_at=timezone.now()
    )
    payout = create_payout().payout

    payout_dispatch(payout_id=payout.pk)

    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert list(PayoutAttempt.objects.filter(payout=payout).values_list("provider_name")) == [
        ("sandbox-b",)
    ]


def test_after_the_cool_down_one_probe_goes_to_the_provider(circuit_settings) -> None:
    now = timezone.now()
    PayoutProviderCircuit.objects.create(
        provider_name="sandbox", state=CircuitState.OPEN, opened_at=now - timedelta(seconds=61)
    )
    from payouts.models import Payout

    with transaction.atomic():
        table = RoutingTable(rules=[], circuits=circuits_view(now=now))
        first = table.pick(Payout(internal_reference="po_a", mode="test"), tried=())
        second = table.pick(Payout(internal_reference="po_b", mode="test"), tried=())

    assert (first, second) == ("sandbox", "sandbox-b")
    assert _state("sandbox") == CircuitState.HALF_OPEN


def test_still_cooling_down_is_skipped(circuit_settings) -> None:
    now = timezone.now()
    PayoutProviderCircuit.objects.create(
        provider_name="sandbox", state=CircuitState.OPEN, opened_at=now - timedelta(seconds=30)
    )
    view = circuits_view(now=now)
    assert view.blocked == {"sandbox"} and view.probes == set()


def test_a_good_probe_closes_and_old_failures_no_longer_count(
    test_wallet: Wallet, circuit_settings
) -> None:
    _attempts(test_wallet, "paystack", ["not_sent"] * 4)
    PayoutProviderCircuit.objects.create(provider_name="paystack", state=CircuitState.HALF_OPEN)
    now = timezone.now()

    circuits_record(outcomes=[("paystack", AttemptOutcome.SUCCESSFUL)], now=now)
    assert _state("paystack") == CircuitState.CLOSED

    circuits_record(outcomes=[("paystack", AttemptOutcome.NOT_SENT)], now=now)
    assert _state("paystack") == CircuitState.CLOSED  # the four failures predate its closing


def test_a_bad_probe_opens_again(circuit_settings) -> None:
    PayoutProviderCircuit.objects.create(provider_name="paystack", state=CircuitState.HALF_OPEN)

    circuits_record(outcomes=[("paystack", AttemptOutcome.UNKNOWN)], now=timezone.now())

    circuit = PayoutProviderCircuit.objects.get(provider_name="paystack")
    assert circuit.state == CircuitState.OPEN and circuit.opened_at is not None


def test_a_sandboxs_failures_never_open_its_circuit(test_wallet: Wallet, circuit_settings) -> None:
    """They come from one merchant's test switch: another merchant's routing must not see it."""
    _attempts(test_wallet, "sandbox", ["not_sent"] * 6)

    circuits_record(outcomes=[("sandbox", "not_sent")], now=timezone.now())

    assert _state("sandbox") is None


def test_health_shows_each_providers_rates_and_last_attempt(
    test_wallet: Wallet, circuit_settings
) -> None:
    _attempts(test_wallet, "sandbox-b", ["unknown", "not_sent", "rejected", "successful"])

    health = {item.provider_name: item for item in provider_health_list()}

    item = health["sandbox-b"]
    assert (item.attempts, item.answered, item.state) == (4, 4, CircuitState.CLOSED)
    assert (item.unknown, item.not_sent, item.rejected) == (1, 1, 1)
    assert item.failure_rate == 0.75
    assert item.last_attempt_at is not None
    assert health["paystack"].attempts == 0 and health["paystack"].last_attempt_at is None
