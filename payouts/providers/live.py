"""What every live payout adapter (Paystack, Flutterwave) shares: its read timeout
(``PAYOUT_PROVIDER_TIMEOUT_SECONDS`` when set, else the vendor's) and how it reads its vendor's
answers, so that money is never lost or paid twice:

* a send with no HTTP answer is ``NOT_SENT`` when it certainly never left (no key, could not
  connect), else ``UNKNOWN`` (read timeout, broken connection: it may have been received);
* a send answered with a 5xx is ``UNKNOWN``;
* a send refused without a usable acceptance is settled by reading the transfer by our
  reference: what the vendor holds there is the truth; nothing found is ``REJECTED``, or
  ``UNKNOWN`` when the send may have created a transfer the read does not show yet;
* a read by reference with no HTTP answer, or with an answer that says nothing of the transfer,
  is ``UNKNOWN``.
"""

from __future__ import annotations

from django.conf import settings

from core.provider_exchange import ProviderExchange
from core.provider_http import RetryLater
from integrations.base import AnswerT, ProviderAdapter, ProviderAnswer
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


class LivePayoutAdapter(ProviderAdapter[AnswerT]):
    """The base of a live payout adapter, before its vendor's adapter (``class
    PaystackProvider(LivePayoutAdapter[PaystackAnswer], PaystackAdapter)``)."""

    def default_timeout_seconds(self) -> float:
        """``PAYOUT_PROVIDER_TIMEOUT_SECONDS`` when it is set, else the vendor's own."""
        return getattr(
            settings, "PAYOUT_PROVIDER_TIMEOUT_SECONDS", super().default_timeout_seconds()
        )

    def verify_transfer(self, *, reference: str) -> TransferResult:
        raise NotImplementedError

    def _send_settled_by_read(
        self,
        send: AnswerT,
        *,
        reference: str,
        raw: tuple[ProviderExchange, ...],
        maybe_created: bool = False,
    ) -> TransferResult:
        """A send without a usable acceptance (``send``), settled by reading the transfer by our
        ``reference``: what the vendor holds is the truth, with every exchange of the send and
        the read. Nothing found is ``REJECTED``; ``UNKNOWN`` when the send may have created a
        transfer the read does not show yet (``maybe_created``)."""
        verified = self.verify_transfer(reference=reference)
        raw = raw + verified.raw
        if verified.outcome == TransferOutcome.NOT_FOUND:
            if maybe_created:
                return TransferResult(
                    outcome=TransferOutcome.UNKNOWN,
                    message=send.message or "Transfer state unknown at the payout provider",
                    raw=raw,
                )
            return TransferResult(
                outcome=TransferOutcome.REJECTED,
                message=send.message or "Transfer refused by the payout provider",
                raw=raw,
            )
        return TransferResult(
            outcome=verified.outcome,
            provider_reference=verified.provider_reference,
            session_id=verified.session_id,
            message=verified.message,
            raw=raw,
        )
