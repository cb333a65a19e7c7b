"""Every request acts as its signed-in user for the audit records written during it."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from audit.actors import acting_as


class AuditActorMiddleware:
    """Puts the request in the audit context (``audit.actors``), so a staff account changed
    anywhere in the back office (the user admin, its password form, the TOTP device admin, the
    admin's own password change) is recorded with the signed-in user as its actor. The user is
    looked up only if a record is written. Goes after the authentication middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with acting_as(request=request):
            return self.get_response(request)
