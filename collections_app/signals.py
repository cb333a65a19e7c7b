"""Signals collections sends for apps above it.

``paystack_event_received``: a signed Paystack webhook event that is not a charge event (the
only ones collections applies itself), sent with ``event`` (its name) and ``data`` (its
``data`` object). Paystack has one webhook URL per account, so every Paystack event arrives at
the collections route; an app that handles other events (refunds: ``refund.*``) receives them
here, applies them through its own services and returns a short message, or None when the
event is not its own."""

from django.dispatch import Signal

paystack_event_received = Signal()
