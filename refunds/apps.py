"""Refunds of paid collections to the customers who paid them."""

from django.apps import AppConfig


class RefundsConfig(AppConfig):
    name = "refunds"
    verbose_name = "Refunds"
