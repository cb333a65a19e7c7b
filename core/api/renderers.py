"""One renderer wraps every DRF JSON response in ``{status, message, data, statusCode}``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import JSONRenderer


def build_envelope(*, data: Any, message: str, status_code: int) -> dict[str, Any]:
    success = status_code < 400
    return {
        "status": success,
        "message": message,
        "data": data if success else None,
        "statusCode": status_code,
    }


class EnvelopeJSONRenderer(JSONRenderer):
    """Wraps the view's data; bodies built by the exception handler pass through untouched.

    The renderer never changes the HTTP status code. Text that UTF-8 cannot encode (a lone
    surrogate echoed from a request into a message) is written as a JSON escape instead of
    failing the response.
    """

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        response = (renderer_context or {}).get("response")
        if response is not None and not getattr(response, "envelope_ready", False):
            data = build_envelope(
                data=data,
                message=getattr(response, "envelope_message", ""),
                status_code=response.status_code,
            )
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return json.dumps(
                data, cls=self.encoder_class, ensure_ascii=True, separators=(",", ":")
            ).encode("ascii")
