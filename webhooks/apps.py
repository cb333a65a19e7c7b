"""The events app; it turns ``wallets.signals.wallet_balance_low`` into the ``wallet.balance_low``
event."""

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Events and webhooks"

    def ready(self) -> None:
        from wallets.signals import wallet_balance_low
        from webhooks.receivers import wallet_balance_low_receive

        wallet_balance_low.connect(
            wallet_balance_low_receive, dispatch_uid="webhooks_wallet_balance_low"
        )
