"""Back-office plumbing shared by every app's admin."""

from __future__ import annotations

from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """A log or a money record: viewable, never added, edited or deleted through the admin."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
