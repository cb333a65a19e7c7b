"""Name enquiry: validate the beneficiary, then ask the provider chosen by mode."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

from core.exceptions import ApplicationError, ServiceUnavailableError
from core.provider_exchange import ProviderExchange
from wallets.providers.base import (
    AccountNotResolvedError,
    NameEnquiryProvider,
    NameEnquiryUnavailableError,
)
from wallets.selectors import bank_resolve

logger = logging.getLogger(__name__)

ACCOUNT_NUMBER_LENGTH = 10
ACCOUNT_DIGITS_MESSAGE = "Account number must contain only digits"
ACCOUNT_LENGTH_MESSAGE = "account_number: must be exactly 10 digits"
NAME_NOT_RESOLVED_MESSAGE = "Beneficiary account name could not be resolved"
NAME_ENQUIRY_UNAVAILABLE_MESSAGE = "Name enquiry temporarily unavailable, retry after a short delay"
NAME_ENQUIRY_RETRY_AFTER_SECONDS = 5


@dataclass(frozen=True)
class NameEnquiryResult:
    account_name: str
    account_number: str
    bank_code: str
    reference: str
    provider: str = ""
    raw_response: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    exchange: ProviderExchange | None = field(default=None, repr=False, compare=False)


def beneficiary_account_number_validate(account_number: str) -> str:
    """Digits only (ASCII), exactly ten of them; raises the name-enquiry 400 errors."""
    if not account_number or not account_number.isascii() or not account_number.isdigit():
        raise ApplicationError(ACCOUNT_DIGITS_MESSAGE)
    if len(account_number) != ACCOUNT_NUMBER_LENGTH:
        raise ApplicationError(ACCOUNT_LENGTH_MESSAGE)
    return account_number


def name_enquiry_provider_get(*, mode: str) -> NameEnquiryProvider:
    """The provider for the key's mode (settings.NAME_ENQUIRY_PROVIDERS), never the merchant's."""
    try:
        path = settings.NAME_ENQUIRY_PROVIDERS[mode]
    except KeyError:
        raise ValueError(f"no name-enquiry provider configured for mode {mode!r}") from None
    return import_string(path)()


def name_enquiry_reference_generate() -> str:
    return f"NE-{timezone.now():%Y%m%d%H%M%S}-{secrets.token_hex(6).upper()}"


def name_enquiry_resolve(*, mode: str, account_number: str, bank_code: str) -> NameEnquiryResult:
    """Resolves the beneficiary's account name; creates nothing and reserves nothing.

    400: non-digit or wrong-length account number, unknown or inactive bank code, account name
    not resolved. 503 (with Retry-After): the provider is temporarily unavailable.
    """
    beneficiary_account_number_validate(account_number)
    bank = bank_resolve(bank_code=bank_code)
    reference = name_enquiry_reference_generate()
    provider = name_enquiry_provider_get(mode=mode)
    try:
        resolution = provider.resolve_account(
            account_number=account_number, bank_code=bank.bank_code, reference=reference
        )
    except AccountNotResolvedError as error:
        logger.info("name enquiry %s via %s: not resolved (%s)", reference, provider.name, error)
        raise ApplicationError(NAME_NOT_RESOLVED_MESSAGE) from error
    except NameEnquiryUnavailableError as error:
        logger.warning("name enquiry %s via %s: unavailable (%s)", reference, provider.name, error)
        raise ServiceUnavailableError(
            NAME_ENQUIRY_UNAVAILABLE_MESSAGE, retry_after_seconds=NAME_ENQUIRY_RETRY_AFTER_SECONDS
        ) from error
    logger.info("name enquiry %s via %s: resolved", reference, provider.name)
    return NameEnquiryResult(
        account_name=resolution.account_name,
        account_number=account_number,
        bank_code=bank.bank_code,
        reference=reference,
        provider=resolution.provider,
        raw_response=resolution.raw_response,
        exchange=resolution.exchange,
    )
