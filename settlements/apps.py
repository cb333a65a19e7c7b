"""Settlement of collected money: settlements to merchants' wallets, subaccount shares and the
platform ledger that accounts for every kobo collected until it leaves."""

from django.apps import AppConfig


class SettlementsConfig(AppConfig):
    name = "settlements"
    verbose_name = "Settlements"
