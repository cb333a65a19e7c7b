"""``{% load money %}``: ``{{ payout.amount|money:payout.currency }}`` renders ``₦1,200.00``
(``core.money.format_amount_display``), the one way money is shown on back-office pages."""

from __future__ import annotations

from decimal import Decimal

from django import template

from core.money import CURRENCY_NGN, format_amount_display

register = template.Library()


@register.filter(name="money")
def money(amount: Decimal | None, currency: str = CURRENCY_NGN) -> str:
    """An amount as people read it; ``—`` for no amount."""
    if amount is None or amount == "":
        return "—"
    return format_amount_display(Decimal(amount), currency or CURRENCY_NGN)
