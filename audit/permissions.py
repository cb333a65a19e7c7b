"""The back-office permission check of services: the one refusal every staff-only write gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.exceptions import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractUser


def staff_permission_require(user: AbstractUser, *permissions: str, message: str) -> None:
    """Refuses (``ApplicationError``, 403, ``message``) unless ``user`` holds one of
    ``permissions``."""
    if not any(user.has_perm(permission) for permission in permissions):
        raise ApplicationError(message, status=403)
