"""Signals merchants send to the apps above them (which merchants never import)."""

from django.dispatch import Signal

# Sent inside the transaction that creates a merchant, with ``merchant``: the wallets app
# provisions the merchant's wallets on it, so they exist if and only if the merchant does.
merchant_created = Signal()
