"""``paystack_event_received``: a signed Paystack webhook event that is not a charge event (the
only ones collections applies itself), sent by the one Paystack webhook route
(``collections_app.api.views.PaystackWebhookApi``) with ``event`` (its name) and ``data`` (its
``data`` object). Paystack has one webhook URL per account, so every Paystack event arrives at
that route; an app that handles other events (refunds: ``refund.*``; payouts: ``transfer.*``)
receives them here, applies them through its own services and returns a short message, or None
when the event is not its own. It lives here, below every app, so that payouts can receive it
without importing collections."""

from django.dispatch import Signal

paystack_event_received = Signal()
