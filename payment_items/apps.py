from django.apps import AppConfig


class PaymentItemsConfig(AppConfig):
    name = "payment_items"
    verbose_name = "Payment items"
