"""Audit writes: one record per back-office act, in the caller's database transaction."""

from __future__ import annotations

import datetime
import ipaddress
import re
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db import models, transaction
from django.db.models import Model

from audit.actors import acting_as
from audit.models import AuditRecord
from audit.roles import ROLES, Role, role_get
from core.exceptions import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AbstractUser, AnonymousUser, Group
    from django.http import HttpRequest

REDACTED = "[redacted]"
# A value under a key naming one of these is never stored, only one of the SECRET_STATES.
SECRET_KEY_MARKERS = ("secret", "password", "token", "key_hash", "plaintext", "api_key")
SECRET_STATES = frozenset({"rotated", "generated", "changed", "unchanged", "set", "unset", ""})
# Merchant keys and webhook secrets inside any text keep their visible prefix only.
# (Webhook secrets are standard base64, with + / and = padding; older ones URL-safe base64.)
_SECRET_IN_TEXT = re.compile(
    r"\b([sr]k_(?:test|live)_|whsec_)([A-Za-z0-9_+/-]{4})[A-Za-z0-9_+/=-]{8,}"
)
_BEARER_IN_TEXT = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
MAX_REPR_LENGTH = 200
MAX_TEXT_LENGTH = 2000
MAX_DEPTH = 6


def _text(value: str, *, limit: int = MAX_TEXT_LENGTH) -> str:
    value = _SECRET_IN_TEXT.sub(lambda match: f"{match[1]}{match[2]}…{REDACTED}", value)
    value = _BEARER_IN_TEXT.sub(lambda match: f"{match[1]}{REDACTED}", value)
    return value[:limit]


def _is_secret_key(key: str) -> bool:
    lowered = key.lower()
    return any(marker in lowered for marker in SECRET_KEY_MARKERS)


def audit_value(value: Any, *, depth: int = 0) -> Any:
    """A JSON-ready copy of ``value`` with every secret taken out: model instances become
    ``{"id", "repr"}``, money and dates strings; a value under a secret-looking key becomes
    ``"[redacted]"`` (unless it is a state such as ``"rotated"``), and a merchant key or webhook
    secret inside a string keeps its visible prefix only."""
    if depth > MAX_DEPTH:
        return REDACTED
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Model):
        return {"id": value.pk, "repr": _text(str(value), limit=MAX_REPR_LENGTH)}
    if isinstance(value, Mapping):
        return {
            str(key): _secret_state(item)
            if _is_secret_key(str(key))
            else audit_value(item, depth=depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset | models.QuerySet):
        return [audit_value(item, depth=depth + 1) for item in value]
    return _text(str(value))


def _secret_state(value: Any) -> str:
    return value if isinstance(value, str) and value in SECRET_STATES else REDACTED


def _client_address(request: HttpRequest | None) -> str | None:
    """The peer address of the request (``REMOTE_ADDR``; forwarded headers are not trusted)."""
    if request is None:
        return None
    address = (request.META.get("REMOTE_ADDR") or "").strip()
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def _actor_fields(actor: AbstractBaseUser | AnonymousUser | str | None) -> tuple[Any, str]:
    if actor is None:
        return None, "system"
    if isinstance(actor, str):
        return None, actor[:150] or "system"
    if not getattr(actor, "is_authenticated", False) or actor.pk is None:
        return None, "anonymous"
    return actor, actor.get_username()[:150]


def _object_fields(obj: Model | type[Model] | None) -> tuple[str, str, str]:
    if obj is None:
        return "", "", ""
    if isinstance(obj, type) and issubclass(obj, Model):
        return obj._meta.label_lower, "", str(obj._meta.verbose_name_plural)[:MAX_REPR_LENGTH]
    return (
        obj._meta.label_lower,
        "" if obj.pk is None else str(obj.pk)[:64],
        _text(str(obj), limit=MAX_REPR_LENGTH),
    )


@transaction.atomic
def audit_record(
    *,
    actor: AbstractBaseUser | AnonymousUser | str | None,
    action: str,
    obj: Model | type[Model] | None,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    reason: str = "",
    request: HttpRequest | None = None,
) -> AuditRecord:
    """Records one back-office act by ``actor`` (a user, or a label such as
    ``"manage.py staff_role"`` for the command line) on ``obj`` (an instance, or a model class
    for acts on many rows such as an export).

    ``before`` and ``after`` hold the values that changed. Secrets never belong in them: pass a
    key's prefix or ``"rotated"``; any value under a secret-looking key, and any secret key or
    webhook secret inside a string, is replaced anyway. The IP address comes from ``request``.
    """
    actor_user, actor_label = _actor_fields(actor)
    object_type, object_id, object_repr = _object_fields(obj)
    return AuditRecord.objects.create(
        actor=actor_user,
        actor_label=actor_label,
        action=action[:100],
        object_type=object_type,
        object_id=object_id,
        object_repr=object_repr,
        before=None if before is None else audit_value(dict(before)),
        after=None if after is None else audit_value(dict(after)),
        reason=_text((reason or "").strip(), limit=MAX_TEXT_LENGTH * 2),
        ip_address=_client_address(request),
    )


# --- Staff roles ----------------------------------------------------------------------------


def _permissions_for(role: Role) -> list[Any]:
    from django.contrib.auth.models import Permission

    found = []
    for name in role.permissions:
        app_label, codename = name.split(".", 1)
        try:
            found.append(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
        except Permission.DoesNotExist:
            raise ApplicationError(
                f"role {role.key}: permission {name} does not exist (run migrate first)"
            ) from None
    return found


@transaction.atomic
def staff_roles_sync() -> list[Group]:
    """Creates every role's group and sets its permissions to exactly the role's list."""
    from django.contrib.auth.models import Group

    groups = []
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role.group_name)
        group.permissions.set(_permissions_for(role))
        groups.append(group)
    return groups


@transaction.atomic
def staff_role_grant(
    *,
    user: AbstractUser,
    role_key: str,
    actor: AbstractBaseUser | str | None,
    reason: str = "",
    request: HttpRequest | None = None,
) -> Group:
    """Puts ``user`` in the role's group (created if missing) and makes them staff, so they can
    sign in to the back office."""
    from django.contrib.auth.models import Group

    role = role_get(role_key)
    group, created = Group.objects.get_or_create(name=role.group_name)
    if created:
        group.permissions.set(_permissions_for(role))
    before = {
        "is_staff": user.is_staff,
        "groups": sorted(user.groups.values_list("name", flat=True)),
    }
    with acting_as(actor, request=request):  # the account's own records name this actor too
        user.groups.add(group)
        if not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
    audit_record(
        actor=actor,
        action="auth.user.role_grant",
        obj=user,
        before=before,
        after={"is_staff": True, "groups": sorted(user.groups.values_list("name", flat=True))},
        reason=reason,
        request=request,
    )
    return group


@transaction.atomic
def staff_role_revoke(
    *,
    user: AbstractUser,
    role_key: str,
    actor: AbstractBaseUser | str | None,
    reason: str = "",
    request: HttpRequest | None = None,
) -> None:
    """Takes ``user`` out of the role's group (their other roles and staff flag stay)."""
    from django.contrib.auth.models import Group

    role = role_get(role_key)
    before = sorted(user.groups.values_list("name", flat=True))
    group = Group.objects.filter(name=role.group_name).first()
    if group is not None:
        with acting_as(actor, request=request):
            user.groups.remove(group)
    audit_record(
        actor=actor,
        action="auth.user.role_revoke",
        obj=user,
        before={"groups": before},
        after={"groups": sorted(user.groups.values_list("name", flat=True))},
        reason=reason,
        request=request,
    )
