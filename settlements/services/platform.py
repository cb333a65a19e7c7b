"""The platform merchant: the one ``Merchant`` (``is_platform``) that owns the platform's own
wallets, one per mode, where a settlement's subaccount shares wait for their payouts. It is
made on first use, with its wallets and without secret keys, so it can never call the API."""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, transaction

from merchants.models import Merchant
from wallets.models import Wallet
from wallets.services import wallets_create_for_merchant


def platform_merchant_get() -> Merchant:
    """The platform merchant, created with its test and live wallets the first time. Safe to
    call concurrently: the unique constraint on ``is_platform`` lets one creation win and the
    others read it."""
    merchant = Merchant.objects.filter(is_platform=True).first()
    if merchant is not None:
        return merchant
    try:
        with transaction.atomic():
            merchant = Merchant.objects.create(
                name=settings.PLATFORM_MERCHANT_NAME,
                email=settings.PLATFORM_MERCHANT_EMAIL,
                is_platform=True,
            )
            wallets_create_for_merchant(merchant=merchant)
    except IntegrityError:
        # Another process created it first (its insert made this one wait, then fail).
        return Merchant.objects.get(is_platform=True)
    return merchant


def platform_wallet_get(*, mode: str) -> Wallet:
    """The platform's wallet of ``mode`` (an unlocked read; created if missing)."""
    merchant = platform_merchant_get()
    wallet = Wallet.objects.filter(merchant=merchant, mode=mode).first()
    if wallet is None:
        wallets_create_for_merchant(merchant=merchant)
        wallet = Wallet.objects.get(merchant=merchant, mode=mode)
    return wallet
