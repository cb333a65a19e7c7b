"""Who is acting right now, for audit records written where no caller passes an actor.

The staff-account signals (``audit.signals``) record a change of a user or a TOTP device at the
save itself, wherever it was made. They ask ``current_actor()`` who made it:

* inside a request (``audit.middleware.AuditActorMiddleware``): the signed-in user of that
  request (the back office), with the request for the client address;
* inside ``acting_as(actor)``: that actor (a service acting for a user, a project command with
  its ``command_actor`` label);
* otherwise the process: ``manage.py <command> (<OS user>)`` when run through ``manage.py`` or
  ``django-admin`` (``changepassword``, ``createsuperuser``, ``shell``), else ``"system"``.
"""

from __future__ import annotations

import contextvars
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.commands import command_actor

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser
    from django.http import HttpRequest

SYSTEM_ACTOR = "system"
_COMMAND_LAUNCHERS = ("manage.py", "django-admin", "django-admin.py")


@dataclass(frozen=True)
class Acting:
    """The actor of the current context: a user, a label, or the request's signed-in user."""

    actor: AbstractBaseUser | str | None = None
    request: HttpRequest | None = None

    def resolve(self) -> AbstractBaseUser | str | None:
        if self.actor is not None:
            return self.actor
        if self.request is not None:
            from django.contrib.auth.models import AbstractBaseUser

            user = getattr(self.request, "user", None)
            # A staff user; not the merchant an API key authenticates.
            if isinstance(user, AbstractBaseUser) and user.is_authenticated:
                return user
            return "anonymous"
        return None


_acting: contextvars.ContextVar[Acting | None] = contextvars.ContextVar(
    "audit_acting", default=None
)


def _process_actor() -> str:
    argv = sys.argv
    if len(argv) > 1 and os.path.basename(argv[0]) in _COMMAND_LAUNCHERS:
        return command_actor(argv[1])
    return SYSTEM_ACTOR


@contextmanager
def acting_as(
    actor: AbstractBaseUser | str | None = None, *, request: HttpRequest | None = None
) -> Iterator[None]:
    """Records written inside the block name ``actor`` (or, without one, ``request.user``)."""
    token = _acting.set(Acting(actor=actor, request=request))
    try:
        yield
    finally:
        _acting.reset(token)


def current_actor() -> AbstractBaseUser | str:
    """The user or label the current context acts as (see the module docstring)."""
    acting = _acting.get()
    resolved = acting.resolve() if acting is not None else None
    return resolved if resolved is not None else _process_actor()


def current_request() -> HttpRequest | None:
    acting = _acting.get()
    return acting.request if acting is not None else None
