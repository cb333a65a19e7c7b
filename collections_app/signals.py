"""Signals collections sends for apps above it.

``paystack_event_received`` (defined in ``integrations.paystack.signals``, so apps on
collections' own layer can receive it too): a signed Paystack webhook event that is not a
charge event, sent by collections' Paystack route for the apps that handle it (refunds:
``refund.*``; payouts: ``transfer.*``)."""

from integrations.paystack.signals import paystack_event_received

__all__ = ["paystack_event_received"]
