"""What every live name-enquiry adapter (Paystack, Flutterwave) reads the same way in its vendor's
answer: nothing came back (no key, a timeout, no connection) or the vendor gave no usable answer
(5xx, 401/403, 408/429) means the provider is unavailable; a resolved account needs its holder's
name. A name enquiry waits for the customer, so its connect timeout is short."""

from __future__ import annotations

import logging

from core.provider_http import RetryLater
from integrations.base import ProviderAnswer
from wallets.providers.base import (
    AccountNotResolvedError,
    AccountResolution,
    NameEnquiryUnavailableError,
)

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_MAX_SECONDS = 3.0


def unavailable_raise(answer: ProviderAnswer, *, reference: str) -> None:
    """Raises ``NameEnquiryUnavailableError`` when nothing came back or the answer is no usable
    word from the vendor (``retry_later``); returns when the vendor answered."""
    exchange = answer.exchange
    retry_later = answer.retry_later
    if retry_later == RetryLater.NOT_CONFIGURED:
        logger.error("name enquiry %s: %s", reference, exchange.error)
        raise NameEnquiryUnavailableError(
            "provider credentials are not configured", exchange=exchange
        )
    if answer.http_status is None:
        timed_out = retry_later is not None and retry_later.timed_out
        reason = "provider timed out" if timed_out else "provider unreachable"
        logger.warning("name enquiry %s: %s (%s)", reference, reason, type(answer.error).__name__)
        raise NameEnquiryUnavailableError(reason, exchange=exchange) from answer.error
    if retry_later is not None:
        logger.warning(
            "name enquiry %s: provider answered HTTP %s (%s)",
            reference,
            answer.http_status,
            retry_later,
        )
        raise NameEnquiryUnavailableError(
            f"provider HTTP {answer.http_status}", raw_response=answer.body, exchange=exchange
        )


def account_resolution_of(
    answer: ProviderAnswer, *, account_number: str, bank_code: str, provider: str
) -> AccountResolution:
    """The account the vendor resolved, named by ``data.account_name``; raises
    ``AccountNotResolvedError`` when the answer names nobody."""
    account_name = answer.data.get("account_name")
    if not isinstance(account_name, str) or not account_name.strip():
        raise AccountNotResolvedError(
            "provider returned no account name", raw_response=answer.body, exchange=answer.exchange
        )
    return AccountResolution(
        account_name=account_name.strip(),
        account_number=account_number,
        bank_code=bank_code,
        provider=provider,
        raw_response=answer.body,
        exchange=answer.exchange,
    )
