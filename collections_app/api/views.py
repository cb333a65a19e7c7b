"""Collection routes (initialize, status check, search), the test-mode completion helper and
the live provider's webhook."""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from collections_app.api import examples
from collections_app.api.serializers import (
    TestHelperCompleteInputSerializer,
    TransactionInitializeInputSerializer,
    TransactionInitializeOutputSerializer,
    TransactionSearchOutputSerializer,
    TransactionStatusOutputSerializer,
)
from collections_app.models import ConfirmationSource
from collections_app.provider_verify import transaction_provider_verify
from collections_app.selectors import (
    transaction_get,
    transaction_get_for_provider,
    transaction_get_for_search,
    transaction_get_for_status,
)
from collections_app.services import (
    SANDBOX_GATEWAY,
    transaction_confirm,
    transaction_initialize,
)
from collections_app.signals import paystack_event_received
from core.api.base import ForbiddenMerchantApi
from core.api.parsers import json_body_load
from core.api.request_text import request_text_check
from core.api.responses import EnvelopeResponse
from core.api.schema_components import ApiTag
from core.api.webhooks import ProviderWebhookApi, provider_event_schema
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from integrations.paystack import SIGNATURE_HEADER, paystack_signature_valid
from merchants.api.test_helpers import TestHelperApi
from merchants.models import Mode
from merchants.scopes import Scope

logger = logging.getLogger(__name__)

TRANSACTION_NOT_FOUND = "Transaction not found"
PAYSTACK_CHARGE_EVENTS = frozenset({"charge.success", "charge.failed"})


class TransactionInitializeApi(ForbiddenMerchantApi):
    openapi_tag = ApiTag.COLLECTIONS
    required_scopes = {"POST": Scope.COLLECTIONS_WRITE}
    error_statuses = (409, 503)

    @extend_schema(
        operation_id="transactions_initialize",
        summary="Initialize a collection transaction for a payment item",
        description=(
            "Starts a payment by your customer for one of your payment items. Card: redirect "
            "the customer to data.authorization_url, our hosted checkout. Bank transfer: the "
            "answer may carry payment_instructions (an account number and the exact amount "
            "to send). amount_to_be_paid is what the customer pays: the amount plus the "
            "collection fee. The outcome reaches your callback_url (the customer's browser) "
            "and your webhook URL (signed). transaction_reference is yours and idempotent: the "
            "same one with the same details answers the first transaction again; with other "
            "details, 409. The callback URL must be an https or http URL on a public host."
        ),
        examples=examples.INITIALIZE_EXAMPLES,
        request=TransactionInitializeInputSerializer,
        responses=TransactionInitializeOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = TransactionInitializeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = transaction_initialize(
            merchant=self.merchant(request),
            mode=self.mode(request),
            **serializer.service_arguments(),
        )
        message = "Transaction initialized" if result.created else "Transaction already initialized"
        return EnvelopeResponse(
            TransactionInitializeOutputSerializer(result.transaction).data, message=message
        )


class TransactionStatusApi(ForbiddenMerchantApi):
    openapi_tag = ApiTag.COLLECTIONS
    required_scopes = {"GET": Scope.READ}

    @extend_schema(
        operation_id="transactions_check_status",
        summary="Check a collection transaction's status",
        description=(
            "The payment status of one transaction by our reference (TXN_…, the reference "
            "of the initialize answer; your transaction_reference is not looked up here): "
            "pending, paid, failed, cancelled or expired, with the payment item, the customer "
            "and the business. Check it before you fulfil an order: a callback alone proves "
            "nothing. An unknown reference is a 400 (Transaction not found)."
        ),
        examples=examples.STATUS_EXAMPLES,
        responses=TransactionStatusOutputSerializer,
    )
    def get(self, request: Request, reference: str) -> EnvelopeResponse:
        found = transaction_get_for_status(
            merchant=self.merchant(request), mode=self.mode(request), reference=reference
        )
        if found is None:
            raise ApplicationError(TRANSACTION_NOT_FOUND)
        return EnvelopeResponse(
            TransactionStatusOutputSerializer(found).data, message="Transaction status retrieved"
        )


class TransactionSearchApi(ForbiddenMerchantApi):
    openapi_tag = ApiTag.COLLECTIONS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="transactions_search",
        summary="Everything about one collection transaction",
        description=(
            "The whole record of one transaction by our reference (TXN_…): amounts (paid, to "
            "be paid, fee), payment_status (pending, paid, failed, cancelled or expired), "
            "channel, gateway, attempts, the revenue split, the payment item, customer and "
            "business. An unknown reference is a 404."
        ),
        examples=examples.SEARCH_EXAMPLES,
        responses=TransactionSearchOutputSerializer,
    )
    def get(self, request: Request, reference: str) -> EnvelopeResponse:
        found = transaction_get_for_search(
            merchant=self.merchant(request), mode=self.mode(request), reference=reference
        )
        if found is None:
            raise NotFoundError(TRANSACTION_NOT_FOUND)
        return EnvelopeResponse(
            TransactionSearchOutputSerializer(found).data, message="Transaction found"
        )


class TestHelperTransactionCompleteApi(ForbiddenMerchantApi, TestHelperApi):
    """Test mode only: settles a pending transaction as a provider confirmation would."""

    error_statuses = (404, 409)
    live_key_message = "Not found: test helpers work only with a test secret key"

    @extend_schema(
        operation_id="test_helpers_transactions_complete",
        summary="Test mode: complete a pending transaction as paid, failed or cancelled",
        description=(
            "Test mode only. Settles a pending test transaction as the provider's confirmation "
            "would: the same status change, callback and signed webhook a real payment gives. "
            "The answer is the transaction's whole record, with the message Transaction "
            "marked paid (or failed, cancelled). A transaction already final is a 409; a live "
            "key gets 404."
        ),
        examples=examples.COMPLETE_EXAMPLES,
        request=TestHelperCompleteInputSerializer,
        responses=TransactionSearchOutputSerializer,
    )
    def post(self, request: Request, reference: str) -> EnvelopeResponse:
        self.test_key_required(request)
        merchant, mode = self.merchant(request), self.mode(request)
        serializer = TestHelperCompleteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        found = transaction_get(merchant=merchant, mode=mode, reference=reference)
        if found is None:
            raise NotFoundError(TRANSACTION_NOT_FOUND)
        result = transaction_confirm(
            collection=found,
            outcome=serializer.validated_data["outcome"],
            gateway_reference=f"SBX_{secrets.token_hex(8).upper()}",
            gateway_used=SANDBOX_GATEWAY,
            source=ConfirmationSource.TEST_HELPER,
        )
        if not result.applied:
            raise ConflictError(
                f"Transaction is already {result.transaction.payment_status}; "
                "a final transaction cannot change"
            )
        refreshed = transaction_get_for_search(merchant=merchant, mode=mode, reference=reference)
        return EnvelopeResponse(
            TransactionSearchOutputSerializer(refreshed).data,
            message=f"Transaction marked {result.transaction.payment_status}",
        )


class PaystackWebhookApi(ProviderWebhookApi):
    """Paystack's webhook for live collection transactions.

    Authenticated by ``x-paystack-signature`` (hex HMAC-SHA512 of the raw body keyed with
    ``PAYSTACK_SECRET_KEY``), not by a merchant key. The event is only a hint: the outcome is
    read with ``GET /transaction/verify/:reference`` and applied through
    ``transaction_confirm``. Idempotent: a transaction already final is left alone (no verify
    call), so redelivered events change nothing. Unknown references and other events answer
    200 so Paystack stops resending them; a failed verify answers 503 so it tries again. Events
    other than charges go to ``collections_app.signals.paystack_event_received`` first (refunds
    apply ``refund.*`` there, payouts ``transfer.*``; data null, the message says what was done).
    """

    error_statuses = (401, 503)

    @provider_event_schema(
        operation_id="webhooks_paystack",
        summary="Paystack webhook (live collections): verified, then confirmed by a verify call",
        description=(
            "Called by Paystack for live collection transactions; merchants never call it. "
            "Authenticated by x-paystack-signature (a hex HMAC-SHA512 of the raw body), not by "
            "a merchant key: a missing or wrong signature is a 401. The event is only a hint: "
            "the outcome is read back from Paystack's verify call. A transaction already final "
            "is left alone, so a redelivered event changes nothing; other events and unknown "
            "references answer 200 with data null so Paystack stops resending; a failed verify "
            "answers 503 so Paystack tries again. Refund events (refund.processed, "
            "refund.failed, refund.pending, refund.processing) are hints too: the refunds of "
            "that live transaction still pending are asked about at once (data null). "
            "Transfer events (transfer.success, transfer.failed, transfer.reversed) settle the "
            "live payout they name, once per event and in any order (data null; the message "
            "says applied, duplicate, stale, unknown_reference or conflict)."
        ),
        acknowledged={
            "reference": {"type": "string"},
            "payment_status": {"$ref": "#/components/schemas/PaymentStatusEnum"},
        },
        acknowledgement="Accepted: applied, already processed (data as shown) or ignored "
        "(data null)",
        examples=examples.PAYSTACK_WEBHOOK_EXAMPLES,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        raw_body = request.body
        signature = request.headers.get(SIGNATURE_HEADER, "")
        if not paystack_signature_valid(
            raw_body, signature, secret_key=settings.PAYSTACK_SECRET_KEY
        ):
            raise self.signature_refused(
                request, "paystack webhook refused: bad or missing signature"
            )
        request_text_check(request, {})
        payload = json_body_load(raw_body)
        event = payload.get("event") if isinstance(payload, dict) else None
        data = payload.get("data") if isinstance(payload, dict) else None
        reference = data.get("reference") if isinstance(data, dict) else None
        if (
            event not in PAYSTACK_CHARGE_EVENTS
            and isinstance(event, str)
            and isinstance(data, dict)
        ):
            # Another app's event (refunds: refund.processed, refund.failed): applied there.
            for _receiver, handled in paystack_event_received.send(
                sender=PaystackWebhookApi, event=event, data=data
            ):
                if handled:
                    return EnvelopeResponse(None, message=str(handled))
        if event not in PAYSTACK_CHARGE_EVENTS or not isinstance(reference, str):
            return EnvelopeResponse(None, message="Event ignored")
        found = transaction_get_for_provider(mode=Mode.LIVE, reference=reference)
        if found is None:
            logger.warning("paystack webhook %s for unknown reference %r", event, reference[:60])
            return EnvelopeResponse(None, message="Event ignored: unknown reference")
        if found.is_final:
            return EnvelopeResponse(
                {"reference": found.reference, "payment_status": found.payment_status},
                message="Event already processed",
            )
        result = transaction_provider_verify(
            collection=found, source=ConfirmationSource.PROVIDER_WEBHOOK
        )
        status = result.transaction.payment_status if result else found.payment_status
        return EnvelopeResponse(
            {"reference": found.reference, "payment_status": status},
            message="Event processed",
        )
