"""Sweeps: the merchant's own settlement bank account and the schedule that pays the wallet's
balance above an amount kept into it."""

from django.apps import AppConfig


class SweepsConfig(AppConfig):
    name = "sweeps"
    verbose_name = "Sweeps"
