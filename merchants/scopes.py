"""The scopes a merchant key may hold, and which key holds which.

A secret key (``sk_<mode>_…``) holds every scope. A restricted key (``rk_<mode>_…``) holds the
scopes it was created with, no more. Each merchant route declares the scope each of its methods
needs (``required_scopes`` on the view); ``core.api.permissions.KeyScopePermission`` checks it.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import models


class Scope(models.TextChoices):
    """What a key may do; the table of which route needs which is in docs/api.md."""

    READ = "read", "Read every resource of the key's mode"
    PAYOUTS_WRITE = "payouts:write", "Create payouts (one or bulk), name enquiry, requery"
    PAYOUTS_APPROVE = "payouts:approve", "Approve payouts"
    COLLECTIONS_WRITE = "collections:write", "Initialize collection transactions"
    REFUNDS_WRITE = "refunds:write", "Refund collections"
    BENEFICIARIES_WRITE = "beneficiaries:write", "Save and delete beneficiaries"
    WEBHOOKS_WRITE = "webhooks:write", "Resend events, change webhook settings"
    SWEEPS_WRITE = "sweeps:write", "Change sweep settings, run a sweep"
    ALERTS_WRITE = "alerts:write", "Set the low-balance alert"
    KEYS_WRITE = "keys:write", "List, create and revoke restricted keys"
    TEST_HELPERS_WRITE = "test_helpers:write", "Call the test-mode helper routes"


ALL_SCOPES: frozenset[str] = frozenset(Scope.values)


def scopes_missing(*, held: Iterable[str], wanted: Iterable[str]) -> list[str]:
    """The scopes of ``wanted`` that ``held`` lacks, in the order of ``Scope``."""
    held_set = set(held)
    wanted_set = set(wanted)
    return [scope for scope in Scope.values if scope in wanted_set and scope not in held_set]
