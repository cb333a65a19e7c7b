"""Back-office plumbing shared by every app's admin."""

from __future__ import annotations

from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """A log or a money record: viewable, never added, edited or deleted through the admin.

    An admin whose records change through services (admin actions, a custom view) sets
    ``allow_change = True``; one that may delete sets ``allow_delete = True``. Either then gets
    Django's usual permission check for that operation. Adding is never allowed.
    """

    allow_change: bool = False
    allow_delete: bool = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        if self.allow_change:
            return super().has_change_permission(request, obj)  # type: ignore[misc]
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        if self.allow_delete:
            return super().has_delete_permission(request, obj)  # type: ignore[misc]
        return False
