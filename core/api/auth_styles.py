"""Authentication-failure styles and messages. Imports nothing from DRF views."""

from enum import StrEnum

UNAUTHORIZED_MESSAGE = "Unauthorized: invalid or missing secret key"
FORBIDDEN_MESSAGE = "Forbidden resource"


class AuthErrorStyle(StrEnum):
    """How a route group answers failed authentication."""

    UNAUTHORIZED = "unauthorized"  # 401 envelope: payouts, quote, banks, name enquiry, wallet
    FORBIDDEN = "forbidden"  # 403 envelope: initialize, status check, search
    FORBIDDEN_BARE = "forbidden_bare"  # 403 {message, error, statusCode}: payment items
