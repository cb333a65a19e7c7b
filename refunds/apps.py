"""Refunds of paid collections to the customers who paid them."""

from django.apps import AppConfig


class RefundsConfig(AppConfig):
    name = "refunds"
    verbose_name = "Refunds"

    def ready(self) -> None:
        from collections_app.signals import paystack_event_received
        from refunds.receivers import paystack_refund_event

        paystack_event_received.connect(
            paystack_refund_event, dispatch_uid="refunds.paystack_refund_event"
        )
