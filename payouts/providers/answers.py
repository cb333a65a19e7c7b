"""What every live payout adapter (Paystack, Flutterwave) reads the same way in its vendor's
answers, so that money is never lost or paid twice:

* a send with no HTTP answer is ``NOT_SENT`` when it certainly never left (no key, could not
  connect), else ``UNKNOWN`` (read timeout, broken connection: it may have been received);
* a send answered with a 5xx is ``UNKNOWN``;
* a read by reference with no HTTP answer, or with an answer that says nothing of the transfer,
  is ``UNKNOWN``;
* a send settled by a read by reference takes what the vendor holds under our reference.
"""

from __future__ import annotations

from core.provider_exchange import ProviderExchange
from core.provider_http import RetryLater
from integrations.base import ProviderAnswer
from payouts.providers.base import TransferOutcome, TransferResult

# Refused without being considered (401/403, 408/429): nothing was created, send it again later.
REFUSED_FOR_NOW = frozenset({RetryLater.CREDENTIALS, RetryLater.THROTTLED})
UNREACHABLE_MESSAGE = "Payout provider unreachable"


def http_error_message(answer: ProviderAnswer) -> str:
    return answer.message or f"Payout provider error (HTTP {answer.http_status or 0})"


def send_unanswered(
    answer: ProviderAnswer, *, raw: tuple[ProviderExchange, ...]
) -> TransferResult | None:
    """The result of a send that brought no word from the vendor (no HTTP answer, or a 5xx);
    ``None`` when the vendor answered."""
    retry_later = answer.retry_later
    if answer.http_status is None:
        outcome = (
            TransferOutcome.NOT_SENT
            if retry_later is not None and retry_later.never_sent
            else TransferOutcome.UNKNOWN
        )
        return TransferResult(outcome=outcome, message=UNREACHABLE_MESSAGE, raw=raw)
    if retry_later == RetryLater.SERVER_ERROR:
        return TransferResult(
            outcome=TransferOutcome.UNKNOWN, message=http_error_message(answer), raw=raw
        )
    return None


def verify_unknown(answer: ProviderAnswer, *, raw: tuple[ProviderExchange, ...]) -> TransferResult:
    """A read by reference that says nothing of the transfer: no HTTP answer, or an error."""
    message = UNREACHABLE_MESSAGE if answer.http_status is None else http_error_message(answer)
    return TransferResult(outcome=TransferOutcome.UNKNOWN, message=message, raw=raw)


def send_verified(verified: TransferResult, *, raw: tuple[ProviderExchange, ...]) -> TransferResult:
    """A send settled by the read by reference (``verified``): the transfer the vendor holds
    under our reference, with every exchange of the send and the read."""
    return TransferResult(
        outcome=verified.outcome,
        provider_reference=verified.provider_reference,
        session_id=verified.session_id,
        message=verified.message,
        raw=raw,
    )
