"""The payout providers' webhooks: Flutterwave's transfer notifications.

Authenticated by the provider's own secret, never by a merchant key; the event is a hint that
starts an immediate requery of the payout it names (``payout_requery_on_provider_event``).
"""

from __future__ import annotations

import logging

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.request_text import request_text_check
from core.api.responses import EnvelopeResponse
from core.api.schema_components import ApiTag
from core.exceptions import ApplicationError
from integrations.flutterwave.webhooks import (
    WEBHOOK_HASH_HEADER,
    flutterwave_transfer_webhook_parse,
    flutterwave_webhook_hash_valid,
)
from payouts.api import examples
from payouts.services import payout_requery_on_provider_event

logger = logging.getLogger(__name__)

FLUTTERWAVE = "flutterwave"
INVALID_HASH_MESSAGE = "Invalid or missing provider signature"


class FlutterwaveWebhookApi(APIView):
    """Flutterwave's webhook for live payouts (``transfer.completed``).

    Authenticated by ``verif-hash``, compared in constant time with
    ``FLUTTERWAVE_WEBHOOK_HASH``: missing or wrong is a 401. An unreadable body is a 400.
    A transfer event for one of our Flutterwave payouts still open requeries it at once; other
    events, unknown references and payouts already final answer 200 so Flutterwave stops
    resending them.
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    openapi_tag = ApiTag.PROVIDER_WEBHOOKS
    error_statuses = (400, 401)

    @extend_schema(
        operation_id="webhooks_flutterwave",
        summary="Flutterwave webhook (live payouts): verified, then confirmed by a transfer read",
        description=(
            "Called by Flutterwave for live payouts; merchants never call it. Authenticated by "
            "the verif-hash header (the secret hash set in Flutterwave's dashboard), not by a "
            "merchant key: a missing or wrong hash is a 401, an unreadable body a 400. A "
            "transfer.completed event is a hint: the payout it names is asked about by its "
            "reference at once, and settles from that answer. Other events, unknown references "
            "and payouts already final answer 200 with data null or the payout's status, so "
            "Flutterwave stops resending them."
        ),
        request={"application/json": {"type": "object"}},
        responses={
            200: OpenApiResponse(
                {
                    "type": "object",
                    "nullable": True,
                    "properties": {
                        "reference": {"type": "string"},
                        "status": {"$ref": "#/components/schemas/StatusEnum"},
                    },
                    "required": ["reference", "status"],
                },
                description="Accepted: applied, already final (data as shown) or ignored "
                "(data null)",
            )
        },
        examples=examples.FLUTTERWAVE_WEBHOOK_EXAMPLES,
        auth=[],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        if not flutterwave_webhook_hash_valid(request.headers.get(WEBHOOK_HASH_HEADER)):
            logger.warning(
                "flutterwave webhook refused: bad or missing verif-hash (from %s)",
                request.META.get("REMOTE_ADDR", ""),
            )
            raise ApplicationError(INVALID_HASH_MESSAGE, status=401)
        request_text_check(request, {})
        event = flutterwave_transfer_webhook_parse(request.body)
        if event is None:
            return EnvelopeResponse(None, message="Event ignored")
        logger.info(
            "flutterwave webhook: transfer %s (%s) says %s",
            event.reference[:60],
            event.provider_reference[:40],
            event.status[:20],
        )
        payout = payout_requery_on_provider_event(
            provider_name=FLUTTERWAVE, reference=event.reference
        )
        if payout is None:
            logger.warning("flutterwave webhook for unknown reference %r", event.reference[:60])
            return EnvelopeResponse(None, message="Event ignored: unknown reference")
        return EnvelopeResponse(
            {"reference": payout.internal_reference, "status": payout.status},
            message="Event processed",
        )
