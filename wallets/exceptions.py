"""Wallet business-rule failures ; the API layer renders them as the error envelope."""

from __future__ import annotations

from core.exceptions import ApplicationError, ConflictError
from core.money import MAX_WALLET_BALANCE

WALLET_INACTIVE_MESSAGE = "merchant wallet is not active"
INSUFFICIENT_BALANCE_MESSAGE = "insufficient available wallet balance"
INSUFFICIENT_RESERVED_MESSAGE = "reserved wallet balance does not cover this amount"


class WalletInactiveError(ApplicationError):
    def __init__(self, message: str = WALLET_INACTIVE_MESSAGE) -> None:
        super().__init__(message, status=400)


class InsufficientBalanceError(ApplicationError):
    def __init__(self, message: str = INSUFFICIENT_BALANCE_MESSAGE) -> None:
        super().__init__(message, status=400)


class InsufficientReservedBalanceError(ConflictError):
    """Capturing or releasing more than is reserved: a caller bug, never silently absorbed."""

    def __init__(self, message: str = INSUFFICIENT_RESERVED_MESSAGE) -> None:
        super().__init__(message)


class FundingReferenceConflictError(ConflictError):
    """A provider reference already credited a different wallet or amount."""

    def __init__(
        self, message: str = "funding reference already used for a different transfer"
    ) -> None:
        super().__init__(message)


class WalletBalanceLimitError(ApplicationError):
    """A credit would take available plus reserved balance past ``MAX_WALLET_BALANCE``."""

    def __init__(
        self,
        message: str = (
            f"amount: the wallet balance would exceed its limit of {MAX_WALLET_BALANCE}"
        ),
    ) -> None:
        super().__init__(message, status=400)
