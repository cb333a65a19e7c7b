"""The one check of what a key may do: every merchant route declares the scope each of its
methods needs, and a key lacking it gets 403 naming the scope.

A view declares ``required_scopes``, a mapping from HTTP method to scope (``{"GET": "read",
"POST": "payouts:write"}``; the scope vocabulary is ``merchants.scopes.Scope``). ``HEAD`` needs
what ``GET`` needs; ``OPTIONS`` any scope the view declares. A method the view answers but does
not map, or a view that declares nothing, is refused to every key (fails closed); a method the
view does not answer passes here so the view answers 405 as before. ``request.auth`` is the
authenticated key (``merchants.selectors.ActiveKey``: ``has_scope``), read by duck typing: core
imports no app.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

logger = logging.getLogger(__name__)

UNDECLARED_SCOPE_MESSAGE = "This route declares no scope for {method}; no key may call it"
MISSING_SCOPE_MESSAGE = "This key lacks the scope {scope}"


class ScopeDenied(PermissionDenied):
    """A key lacks the scope a route needs (403). ``scope`` is the scope it lacks, or None when
    the route declares none."""

    def __init__(self, message: str, *, scope: str | None) -> None:
        super().__init__(message)
        self.scope = scope


def declared_scopes(view: Any) -> Mapping[str, str]:
    """What ``view`` declares: HTTP method to scope (empty if nothing)."""
    return getattr(view, "required_scopes", None) or {}


def required_scope(view: Any, method: str) -> str | None:
    """The scope ``view`` declares for ``method`` (``HEAD`` reads ``GET``'s), or None if it
    declares none."""
    declared = declared_scopes(view)
    method = method.upper()
    if method == "HEAD" and method not in declared:
        method = "GET"
    return declared.get(method)


class KeyScopePermission(BasePermission):
    """Admits an authenticated key holding the scope the view declares for the method.

    An unauthenticated request is refused here too, so DRF answers it as the route's
    authentication failure (401 or 403 per ``auth_error_style``), as ``IsAuthenticated`` did."""

    def has_permission(self, request: Request, view: Any) -> bool:
        key: Any = request.auth
        if key is None or not getattr(request.user, "is_authenticated", False):
            return False
        method = (request.method or "GET").upper()
        if method == "OPTIONS":
            declared = declared_scopes(view)
            if any(key.has_scope(scope) for scope in declared.values()):
                return True
            scope = next(iter(declared.values()), None)
        else:
            handler_name = "get" if method == "HEAD" else method.lower()
            if not hasattr(view, handler_name):
                return True  # the view answers 405
            scope = required_scope(view, method)
        if scope is None:
            logger.error("%s declares no scope for %s", type(view).__name__, method)
            raise ScopeDenied(UNDECLARED_SCOPE_MESSAGE.format(method=method), scope=None)
        if not key.has_scope(scope):
            raise ScopeDenied(MISSING_SCOPE_MESSAGE.format(scope=scope), scope=scope)
        return True
