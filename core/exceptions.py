"""Business-rule failures raised by services and turned into the envelope by the API layer."""

from __future__ import annotations


class ApplicationError(Exception):
    """A business rule failed. ``status`` is the HTTP status the API answers with."""

    status: int = 400

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.headers = headers or {}


class NotFoundError(ApplicationError):
    status = 404


class ConflictError(ApplicationError):
    status = 409


class ServiceUnavailableError(ApplicationError):
    status = 503

    def __init__(self, message: str, *, retry_after_seconds: int = 5) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after_seconds)})
