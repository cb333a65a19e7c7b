"""``payouts.services.routing``: which provider a payout's next attempt goes to: matching rules
by mode, bank and amount band, lowest priority first, weighted among equals and fixed per payout;
open circuits skipped; the defaults when no rule matches; routes that cross modes refused."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.exceptions import ApplicationError
from payouts.models import Payout, PayoutAttempt, PayoutRoute, SandboxTransfer
from payouts.services import payout_dispatch
from payouts.services.circuits import CircuitView
from payouts.services.routing import (
    RoutingTable,
    default_candidates,
    payout_route_validate,
)
from tests.payouts.factories import PayoutRouteFactory
from tests.payouts.helpers import reload
from wallets.models import Wallet


def _payout(
    *, reference: str = "po_1", bank_code: str = "058", amount: str = "1000.00", mode: str = "test"
) -> Payout:
    return Payout(
        internal_reference=reference, bank_code=bank_code, amount=Decimal(amount), mode=mode
    )


def _route(provider_name: str, **fields: Any) -> PayoutRoute:
    return PayoutRoute(**{"mode": "test", "provider_name": provider_name, **fields})


def test_without_rules_the_mode_provider_comes_first_then_its_failover(settings: Any) -> None:
    settings.PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": ["sandbox-b"], "live": []}
    assert default_candidates("test") == ["sandbox", "sandbox-b"]
    assert default_candidates("live") == ["paystack"]
    assert RoutingTable(rules=[]).candidates(_payout()) == ["sandbox", "sandbox-b"]


def test_a_rule_of_the_payouts_bank_matches_and_another_banks_does_not() -> None:
    table = RoutingTable(
        rules=[_route("sandbox-b", bank_code="044"), _route("sandbox", bank_code="058")]
    )
    assert table.candidates(_payout(bank_code="044")) == ["sandbox-b"]
    assert table.candidates(_payout(bank_code="058")) == ["sandbox"]


def test_an_amount_band_includes_both_ends() -> None:
    band = _route("sandbox-b", min_amount=Decimal("100.00"), max_amount=Decimal("500.00"))
    table = RoutingTable(rules=[band, _route("sandbox", priority=200)])
    assert table.candidates(_payout(amount="100.00"))[0] == "sandbox-b"
    assert table.candidates(_payout(amount="500.00"))[0] == "sandbox-b"
    assert table.candidates(_payout(amount="500.01")) == ["sandbox"]
    assert table.candidates(_payout(amount="99.99")) == ["sandbox"]


def test_lower_priority_comes_first_and_inactive_or_other_mode_rules_never_match() -> None:
    table = RoutingTable(
        rules=[
            _route("sandbox", priority=20),
            _route("sandbox-b", priority=10),
            _route("sandbox", priority=1, active=False),
            _route("paystack", priority=0, mode="live"),
        ]
    )
    assert table.candidates(_payout()) == ["sandbox-b", "sandbox"]


def test_a_test_rule_to_a_live_provider_is_never_followed() -> None:
    table = RoutingTable(rules=[_route("paystack", priority=1), _route("sandbox-b", priority=2)])
    assert table.candidates(_payout()) == ["sandbox-b"]


def test_weights_share_payouts_among_rules_of_one_priority() -> None:
    table = RoutingTable(rules=[_route("sandbox", weight=3), _route("sandbox-b", weight=1)])
    firsts = Counter(table.candidates(_payout(reference=f"po_{n}"))[0] for n in range(4000))
    assert 0.70 < firsts["sandbox"] / 4000 < 0.80


@given(reference=st.text(min_size=1, max_size=40))
def test_a_payout_is_routed_the_same_way_every_time(reference: str) -> None:
    table = RoutingTable(rules=[_route("sandbox", weight=2), _route("sandbox-b", weight=5)])
    payout = _payout(reference=reference)
    assert table.candidates(payout) == table.candidates(payout)
    assert sorted(table.candidates(payout)) == ["sandbox", "sandbox-b"]


def test_pick_skips_an_open_circuit_and_ignores_the_breaker_when_every_one_is_open() -> None:
    rules = [_route("sandbox", priority=1), _route("sandbox-b", priority=2)]
    one_open = RoutingTable(rules=rules, circuits=CircuitView(blocked={"sandbox"}))
    assert one_open.pick(_payout(), tried=()) == "sandbox-b"
    all_open = RoutingTable(rules=rules, circuits=CircuitView(blocked={"sandbox", "sandbox-b"}))
    assert all_open.pick(_payout(), tried=()) == "sandbox"


def test_pick_prefers_a_provider_not_tried_then_goes_round() -> None:
    table = RoutingTable(rules=[_route("sandbox", priority=1), _route("sandbox-b", priority=2)])
    payout = _payout()
    assert table.pick(payout, tried=("sandbox",)) == "sandbox-b"
    assert table.has_untried(payout, tried=("sandbox",))
    assert not table.has_untried(payout, tried=("sandbox", "sandbox-b"))
    assert table.pick(payout, tried=("sandbox", "sandbox-b")) == "sandbox"
    assert table.pick(payout, tried=("sandbox-b", "sandbox")) == "sandbox-b"


@pytest.mark.parametrize(
    ("mode", "provider_name", "low", "high", "field"),
    [
        ("test", "paystack", None, None, "provider_name"),
        ("live", "sandbox", None, None, "provider_name"),
        ("test", "nobody", None, None, "provider_name"),
        ("test", "sandbox", Decimal("10.00"), Decimal("9.99"), "max_amount"),
    ],
)
def test_a_route_the_service_could_not_follow_is_refused(
    mode: str, provider_name: str, low: Decimal | None, high: Decimal | None, field: str
) -> None:
    with pytest.raises(ApplicationError) as refused:
        payout_route_validate(
            mode=mode, provider_name=provider_name, min_amount=low, max_amount=high
        )
    assert str(refused.value.message).startswith(f"{field}: ")


@pytest.mark.django_db
def test_a_dispatch_follows_the_active_route_of_the_payouts_bank(
    funded_wallet: Wallet, create_payout: Callable[..., Any]
) -> None:
    PayoutRouteFactory(provider_name="sandbox-b", bank_code="058", priority=1)
    PayoutRouteFactory(provider_name="sandbox", priority=2)
    payout = create_payout().payout

    payout_dispatch(payout_id=payout.pk)

    payout = reload(payout)
    attempt = PayoutAttempt.objects.get(payout=payout)
    assert (payout.status, payout.provider_name, attempt.provider_name) == (
        "successful",
        "sandbox-b",
        "sandbox-b",
    )
    transfer = SandboxTransfer.objects.get(reference=payout.internal_reference)
    assert transfer.provider_name == "sandbox-b"
    assert transfer.transfer_code.startswith("TRF_sbxb_")
