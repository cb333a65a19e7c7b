"""The payout providers' webhooks: Flutterwave's transfer notifications.

Authenticated by the provider's own secret, never by a merchant key; applied by
``payouts.services.flutterwave_events`` once Flutterwave's own read confirms them.
"""

from __future__ import annotations

from rest_framework.request import Request

from core.api.request_text import request_text_check
from core.api.responses import EnvelopeResponse
from core.api.webhooks import ProviderWebhookApi, provider_event_schema
from integrations.flutterwave.webhooks import (
    WEBHOOK_HASH_HEADER,
    flutterwave_transfer_webhook_parse,
    flutterwave_webhook_hash_valid,
)
from payouts.api import examples
from payouts.services.flutterwave_events import flutterwave_transfer_webhook_apply


class FlutterwaveWebhookApi(ProviderWebhookApi):
    """Flutterwave's webhook for live payouts (``transfer.completed``).

    Authenticated by ``verif-hash``, compared in constant time with
    ``FLUTTERWAVE_WEBHOOK_HASH``: missing or wrong is a 401. An unreadable body is a 400.
    A ``transfer.completed`` event is applied once Flutterwave's read of the transfer by our
    reference confirms a final status; everything else authenticated answers 200 so
    Flutterwave stops resending it.
    """

    error_statuses = (400, 401)

    @provider_event_schema(
        operation_id="webhooks_flutterwave",
        summary="Flutterwave webhook (live payouts): verified, then confirmed by a transfer read",
        description=(
            "Called by Flutterwave for live payouts; merchants never call it. Authenticated by "
            "the verif-hash header (the secret hash set in Flutterwave's dashboard), not by a "
            "merchant key: a missing or wrong hash is a 401, an unreadable body a 400. A "
            "transfer.completed event is applied once Flutterwave's own read of the transfer "
            "by our reference confirms SUCCESSFUL or FAILED (the read's status is the one "
            "applied), once per event: a redelivery changes nothing. An event the read does "
            "not confirm yet applies nothing (the payout's scheduled requery settles it). "
            "Other events and unknown references answer 200 with data null, so Flutterwave "
            "stops resending them."
        ),
        acknowledged={
            "reference": {"type": "string"},
            "status": {"$ref": "#/components/schemas/StatusEnum"},
        },
        acknowledgement="Accepted: applied, duplicate, stale or not confirmed yet (data as "
        "shown), or ignored (data null)",
        examples=examples.FLUTTERWAVE_WEBHOOK_EXAMPLES,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        if not flutterwave_webhook_hash_valid(request.headers.get(WEBHOOK_HASH_HEADER)):
            raise self.signature_refused(
                request, "flutterwave webhook refused: bad or missing verif-hash"
            )
        request_text_check(request, {})
        event = flutterwave_transfer_webhook_parse(request.body)
        if event is None:
            return EnvelopeResponse(None, message="Event ignored")
        applied = flutterwave_transfer_webhook_apply(event)
        if applied.payout is None:
            message = (
                "Event ignored" if applied.result is None else f"Transfer event {applied.result}"
            )
            return EnvelopeResponse(None, message=message)
        message = (
            "Event noted: not confirmed by Flutterwave yet"
            if applied.result is None
            else f"Transfer event {applied.result}"
        )
        return EnvelopeResponse(
            {"reference": applied.payout.internal_reference, "status": applied.payout.status},
            message=message,
        )
