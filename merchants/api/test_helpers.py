"""The base of the test helpers: routes that act as a bank, a provider or the clock would, for a
test key only."""

from __future__ import annotations

from typing import ClassVar

from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.schema_components import ApiTag
from core.exceptions import ApplicationError
from merchants.models import Mode
from merchants.scopes import Scope

# What a test helper that refuses a live key with 403 (rather than 404) answers it.
TEST_KEYS_ONLY_MESSAGE = "Test helpers work only with a test secret key"


class TestHelperApi(MerchantApi):
    """A test helper: a POST needing ``test_helpers:write``, listed under Test helpers. Its
    handler calls ``test_key_required`` first: a live key gets ``live_key_status`` with
    ``live_key_message`` (by default a 404: the route does not exist in live mode)."""

    openapi_tag = ApiTag.TEST_HELPERS
    required_scopes = {"POST": Scope.TEST_HELPERS_WRITE}
    live_key_status: ClassVar[int] = 404
    live_key_message: ClassVar[str] = "Route not found"

    def test_key_required(self, request: Request) -> None:
        """Refuses a live key as the route says (``live_key_status``, ``live_key_message``)."""
        if self.mode(request) != Mode.TEST:
            raise ApplicationError(self.live_key_message, status=self.live_key_status)
