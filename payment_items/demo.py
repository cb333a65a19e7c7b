"""Demo data for ``seed_demo``: the catalogue part."""

from __future__ import annotations

from typing import Any

from merchants.models import Merchant


def demo_catalogue_seed(*, merchant: Merchant) -> dict[str, Any]:
    """Creates demo payment items and subaccounts; returns the ``seed_demo --json`` keys."""
    return {}
