"""Routing: which provider the next attempt of a payout goes to. The service chooses, never the
merchant.

The active ``PayoutRoute`` rules that match the payout (its mode, its bank or any bank, its
amount within the rule's band) give the candidate providers: the lowest ``priority`` first and,
among rules of one priority, an order drawn by weight that is fixed for the payout (seeded by
its reference, so a payout is routed the same way every time it is looked at). With no matching
rule the candidates are the mode's provider (``PAYOUT_PROVIDER_BY_MODE``) then its failover
providers (``PAYOUT_FAILOVER_PROVIDERS_BY_MODE``).

Providers whose circuit is open (``payouts.services.circuits``) are skipped while another
candidate is available; the breaker reorders, it never blocks every route. A payout's next
attempt goes to the first candidate none of its earlier attempts went to, or, once all were
tried, to the one after the last tried. Test mode routes to sandbox providers only, live mode
never does.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from itertools import groupby

from django.conf import settings

from core.exceptions import ApplicationError
from merchants.models import Mode
from payouts.models import Payout, PayoutRoute
from payouts.providers.registry import PROVIDER_CLASSES, provider_name_for_mode
from payouts.providers.sandbox import SANDBOX_PROVIDER_NAMES
from payouts.services.circuits import CircuitView, circuits_view


def provider_allowed_for_mode(*, provider_name: str, mode: str) -> bool:
    """Test mode reaches sandbox providers only; live mode never reaches one."""
    return (provider_name in SANDBOX_PROVIDER_NAMES) == (mode == Mode.TEST)


def payout_route_validate(
    *,
    mode: str,
    provider_name: str,
    min_amount: Decimal | None,
    max_amount: Decimal | None,
) -> None:
    """Refuses a rule the service could not follow: an unknown provider, a provider of the other
    mode (a test payout must never reach a live provider), an empty band."""
    if provider_name not in PROVIDER_CLASSES:
        raise ApplicationError(f"provider_name: unknown payout provider {provider_name!r}")
    if not provider_allowed_for_mode(provider_name=provider_name, mode=mode):
        raise ApplicationError(
            f"provider_name: {provider_name!r} cannot carry {mode} payouts "
            "(test mode goes to sandbox providers only, live mode never does)"
        )
    if min_amount is not None and max_amount is not None and min_amount > max_amount:
        raise ApplicationError("max_amount: must not be below min_amount")


def default_candidates(mode: str) -> list[str]:
    """The mode's provider, then its failover providers: the route when no rule matches."""
    failover = (getattr(settings, "PAYOUT_FAILOVER_PROVIDERS_BY_MODE", None) or {}).get(mode, [])
    names = [provider_name_for_mode(mode), *failover]
    return list(dict.fromkeys(name for name in names if name))


def _weight_score(*, seed: str, provider_name: str, weight: int) -> float:
    """A weighted draw fixed by ``seed`` (Efraimidis–Spirakis): the highest score goes first,
    so a rule of weight 3 leads three times as often as one of weight 1."""
    digest = hashlib.sha256(f"{seed}:{provider_name}".encode()).digest()
    unit = (int.from_bytes(digest[:8], "big") + 1) / (2**64 + 1)  # in (0, 1)
    return math.log(unit) / weight


def weighted_order(rules: Iterable[PayoutRoute], *, seed: str) -> list[str]:
    """The providers of rules of one priority, in an order drawn by weight for ``seed``."""
    scored = sorted(
        rules,
        key=lambda rule: (
            -_weight_score(seed=seed, provider_name=rule.provider_name, weight=rule.weight),
            rule.pk or 0,
        ),
    )
    return [rule.provider_name for rule in scored]


def rule_matches(rule: PayoutRoute, payout: Payout) -> bool:
    return (
        rule.active
        and rule.mode == payout.mode
        and (not rule.bank_code or rule.bank_code == payout.bank_code)
        and (rule.min_amount is None or payout.amount >= rule.min_amount)
        and (rule.max_amount is None or payout.amount <= rule.max_amount)
        and provider_allowed_for_mode(provider_name=rule.provider_name, mode=payout.mode)
    )


@dataclass
class RoutingTable:
    """The active rules and the providers' circuits, read once for a dispatch round."""

    rules: Sequence[PayoutRoute]
    circuits: CircuitView = field(default_factory=CircuitView)

    def candidates(self, payout: Payout) -> list[str]:
        """Every provider that may carry ``payout``, best first (circuits not considered)."""
        matching = sorted(
            (rule for rule in self.rules if rule_matches(rule, payout)),
            key=lambda rule: rule.priority,
        )
        if not matching:
            return default_candidates(payout.mode)
        ordered: list[str] = []
        for _priority, group in groupby(matching, key=lambda rule: rule.priority):
            for name in weighted_order(group, seed=payout.internal_reference):
                if name not in ordered:
                    ordered.append(name)
        return ordered

    def _available(self, payout: Payout) -> list[str]:
        candidates = self.candidates(payout)
        return [name for name in candidates if self.circuits.usable(name)] or candidates

    def has_untried(self, payout: Payout, *, tried: Sequence[str]) -> bool:
        """Another provider may carry the payout: one none of its attempts went to yet."""
        return any(name not in tried for name in self._available(payout))

    def pick(self, payout: Payout, *, tried: Sequence[str]) -> str:
        """The provider of the payout's next attempt (``tried``: the providers of its earlier
        attempts, oldest first). Takes a half-open provider's one probe when it picks it."""
        available = self._available(payout)
        untried = [name for name in available if name not in tried]
        if untried:
            chosen = untried[0]
        else:
            last = tried[-1] if tried and tried[-1] in available else None
            index = available.index(last) + 1 if last is not None else 0
            chosen = available[index % len(available)]
        self.circuits.take(chosen)
        return chosen


def routing_table_load(*, now: datetime) -> RoutingTable:
    """The active routes and the circuits as they stand at ``now`` (two reads)."""
    rules = list(PayoutRoute.objects.filter(active=True).order_by("priority", "id"))
    return RoutingTable(rules=rules, circuits=circuits_view(now=now))
