"""Every change to a staff account is recorded where it is saved, whoever saves it.

Connected in ``AuditConfig.ready``. The actor is ``audit.actors.current_actor()``: the signed-in
user of the request (the back office), the actor of an ``acting_as`` block (project commands),
or the ``manage.py`` command that runs (``changepassword``, ``createsuperuser``). The target is
always the user (``object_type`` ``auth.user``, ``object_id`` the user's id), so one query finds
what happened to an account. A password or a device key is never recorded, only ``"set"``,
``"changed"`` or ``"unset"``.

Actions:

* ``auth.user.add``, ``auth.user.delete``;
* ``auth.user.change``: username, email, names, ``is_active``, ``is_staff``, ``is_superuser``
  (before and after of the fields that changed; ``last_login`` is not a change);
* ``auth.user.password_change``: a new password, or password sign-in disabled (a password
  set when the user is created counts too). The hasher upgrading a hash at sign-in is not;
* ``auth.user.groups_change``, ``auth.user.permissions_change``: the groups (roles) or the
  direct permissions before and after, from either side of the relation;
* ``auth.user.totp_device_add``, ``…_change``, ``…_confirm``, ``…_delete``: TOTP devices
  (name, confirmed, key as ``"changed"``, step, t0, digits, tolerance; the drift and throttling
  state a sign-in updates is not a change).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models import Model
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from audit.actors import current_actor, current_request
from audit.services import audit_record

USER_ADD = "auth.user.add"
USER_CHANGE = "auth.user.change"
USER_DELETE = "auth.user.delete"
PASSWORD_CHANGE = "auth.user.password_change"  # noqa: S105 - an action name
GROUPS_CHANGE = "auth.user.groups_change"
PERMISSIONS_CHANGE = "auth.user.permissions_change"
DEVICE_ADD = "auth.user.totp_device_add"
DEVICE_CHANGE = "auth.user.totp_device_change"
DEVICE_CONFIRM = "auth.user.totp_device_confirm"
DEVICE_DELETE = "auth.user.totp_device_delete"
# What changes who may sign in as the user: the two-person rules read these.
CREDENTIAL_ACTIONS = (
    PASSWORD_CHANGE,
    DEVICE_ADD,
    DEVICE_CHANGE,
    DEVICE_CONFIRM,
    DEVICE_DELETE,
)

_USER_FIELDS = (
    "username",
    "email",
    "first_name",
    "last_name",
    "is_active",
    "is_staff",
    "is_superuser",
)
_DEVICE_FIELDS = ("user_id", "name", "confirmed", "key", "step", "t0", "digits", "tolerance")
_UNCHANGED = object()


def _user_fields() -> tuple[str, ...]:
    names = {field.name for field in get_user_model()._meta.concrete_fields}
    return tuple(name for name in _USER_FIELDS if name in names)


def _record(*, action: str, user: Model, before: Any = None, after: Any = None) -> None:
    audit_record(
        actor=current_actor(),
        action=action,
        obj=user,
        before=before,
        after=after,
        request=current_request(),
    )


def _password_state(encoded: str | None) -> str:
    from django.contrib.auth.hashers import is_password_usable

    return "set" if encoded and is_password_usable(encoded) else "unset"


# --- Users ------------------------------------------------------------------------------------


def _user_pre_save(sender: type[Model], instance: Any, raw: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if raw or instance._state.adding or instance.pk is None:
        instance._audit_before = None
        return
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        instance._audit_before = _UNCHANGED
        return
    instance._audit_before = (
        sender._default_manager.filter(pk=instance.pk).values(*_user_fields(), "password").first()
    )


def _is_rehash(instance: Any, update_fields: Any) -> bool:
    """``check_password``'s setter upgrading the hash of the same password at sign-in: it saves
    the password alone, after clearing the raw password ``set_password`` keeps for this save."""
    return (
        update_fields is not None
        and set(update_fields) == {"password"}
        and getattr(instance, "_password", None) is None
    )


def _user_post_save(
    sender: type[Model], instance: Any, created: bool, raw: bool, **kwargs: Any
) -> None:
    before = instance.__dict__.pop("_audit_before", None)
    if raw:
        return
    fields = _user_fields()
    if created:
        password = _password_state(instance.password)
        _record(
            action=USER_ADD,
            user=instance,
            after={**{name: getattr(instance, name) for name in fields}, "password": password},
        )
        if password == "set":  # noqa: S105 - a state
            _record(
                action=PASSWORD_CHANGE,
                user=instance,
                before={"password": "unset"},
                after={"password": "set"},
            )
        return
    if before is None or before is _UNCHANGED:
        return
    changed = [name for name in fields if before[name] != getattr(instance, name)]
    if changed:
        _record(
            action=USER_CHANGE,
            user=instance,
            before={name: before[name] for name in changed},
            after={name: getattr(instance, name) for name in changed},
        )
    if before["password"] != instance.password and not _is_rehash(
        instance, kwargs.get("update_fields")
    ):
        after = "changed" if _password_state(instance.password) == "set" else "unset"
        _record(
            action=PASSWORD_CHANGE,
            user=instance,
            before={"password": _password_state(before["password"])},
            after={"password": after},
        )


def _user_post_delete(sender: type[Model], instance: Any, **kwargs: Any) -> None:
    _record(
        action=USER_DELETE,
        user=instance,
        before={name: getattr(instance, name) for name in _user_fields()},
    )


# --- Groups and direct permissions ----------------------------------------------------------


def _group_names(user: Any) -> list[str]:
    return sorted(user.groups.values_list("name", flat=True))


def _permission_names(user: Any) -> list[str]:
    return sorted(
        f"{app_label}.{codename}"
        for app_label, codename in user.user_permissions.values_list(
            "content_type__app_label", "codename"
        )
    )


def _names_of(model: type[Model], pks: Any) -> list[str]:
    if model is Group:
        return sorted(Group.objects.filter(pk__in=pks).values_list("name", flat=True))
    return sorted(
        f"{app_label}.{codename}"
        for app_label, codename in Permission.objects.filter(pk__in=pks).values_list(
            "content_type__app_label", "codename"
        )
    )


def _relation_changed(*, related: type[Model], action_name: str, names_of_user: Any) -> Any:
    """An ``m2m_changed`` receiver for ``User.<relation>``: one record per user whose groups
    (or permissions) changed, with the whole list before and after."""

    def receiver(
        sender: Any,
        instance: Any,
        action: str,
        reverse: bool,
        model: type[Model],
        pk_set: set[Any] | None,
        **kwargs: Any,
    ) -> None:
        user_model = get_user_model()
        if action == "pre_clear":
            if reverse:
                instance._audit_cleared_users = list(instance.user_set.values_list("pk", flat=True))
            else:
                instance._audit_cleared = names_of_user(instance)
            return
        if action not in ("post_add", "post_remove", "post_clear"):
            return
        if not reverse:
            after = names_of_user(instance)
            if action == "post_clear":
                before = instance.__dict__.pop("_audit_cleared", [])
            else:
                moved = set(_names_of(related, pk_set or ()))
                if not moved:
                    return
                before = sorted(set(after) - moved if action == "post_add" else set(after) | moved)
            if before != after:
                _record(
                    action=action_name,
                    user=instance,
                    before={"names": before},
                    after={"names": after},
                )
            return
        # From the group's or permission's side: ``pk_set`` holds the users.
        name = _names_of(related, [instance.pk])
        if action == "post_clear":
            user_pks = instance.__dict__.pop("_audit_cleared_users", [])
        else:
            user_pks = list(pk_set or ())
        for user in user_model._default_manager.filter(pk__in=user_pks).order_by("pk"):
            after = names_of_user(user)
            before = sorted(
                set(after) - set(name) if action == "post_add" else set(after) | set(name)
            )
            if before != after:
                _record(
                    action=action_name, user=user, before={"names": before}, after={"names": after}
                )

    return receiver


_groups_changed = _relation_changed(
    related=Group, action_name=GROUPS_CHANGE, names_of_user=_group_names
)
_permissions_changed = _relation_changed(
    related=Permission, action_name=PERMISSIONS_CHANGE, names_of_user=_permission_names
)


# --- TOTP devices ---------------------------------------------------------------------------


def _device_user(user_id: Any) -> Model:
    user_model = get_user_model()
    user = user_model._default_manager.filter(pk=user_id).first()
    if user is None:  # deleted with its devices: name it by id
        user = user_model(pk=user_id)
        setattr(user, user_model.USERNAME_FIELD, f"#{user_id}")
    return user


def _device_pre_save(sender: type[Model], instance: Any, raw: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if raw or instance._state.adding or instance.pk is None:
        instance._audit_before = None
        return
    if update_fields is not None and not set(update_fields) & {*_DEVICE_FIELDS, "user"}:
        instance._audit_before = _UNCHANGED
        return
    instance._audit_before = (
        sender._default_manager.filter(pk=instance.pk).values(*_DEVICE_FIELDS).first()
    )


def _device_post_save(
    sender: type[Model], instance: Any, created: bool, raw: bool, **kwargs: Any
) -> None:
    before = instance.__dict__.pop("_audit_before", None)
    if raw:
        return
    if created:
        _record(
            action=DEVICE_ADD,
            user=_device_user(instance.user_id),
            after={
                "device_id": instance.pk,
                "device": instance.name,
                "confirmed": instance.confirmed,
                "key": "set",
            },
        )
        return
    if before is None or before is _UNCHANGED:
        return
    changed = [name for name in _DEVICE_FIELDS if before[name] != getattr(instance, name)]
    if not changed:
        return
    if changed == ["confirmed"] and instance.confirmed:
        _record(
            action=DEVICE_CONFIRM,
            user=_device_user(instance.user_id),
            before={"device_id": instance.pk, "device": instance.name, "confirmed": False},
            after={"device_id": instance.pk, "device": instance.name, "confirmed": True},
        )
        return
    old = {name: before[name] for name in changed}
    new = {name: getattr(instance, name) for name in changed}
    if "key" in changed:
        old["key"], new["key"] = "set", "changed"
    identity = {"device_id": instance.pk, "device": instance.name}
    targets = [instance.user_id]
    if "user_id" in changed:
        targets.insert(0, before["user_id"])
    for user_id in targets:
        _record(
            action=DEVICE_CHANGE,
            user=_device_user(user_id),
            before={**identity, **old},
            after={**identity, **new},
        )


def _device_post_delete(sender: type[Model], instance: Any, **kwargs: Any) -> None:
    _record(
        action=DEVICE_DELETE,
        user=_device_user(instance.user_id),
        before={"device_id": instance.pk, "device": instance.name, "confirmed": instance.confirmed},
    )


def connect() -> None:
    """Connects the receivers (once: each has a ``dispatch_uid``)."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    user_model = get_user_model()
    pre_save.connect(_user_pre_save, sender=user_model, dispatch_uid="audit_user_pre_save")
    post_save.connect(_user_post_save, sender=user_model, dispatch_uid="audit_user_post_save")
    post_delete.connect(_user_post_delete, sender=user_model, dispatch_uid="audit_user_post_delete")
    m2m_changed.connect(
        _groups_changed, sender=user_model.groups.through, dispatch_uid="audit_user_groups"
    )
    m2m_changed.connect(
        _permissions_changed,
        sender=user_model.user_permissions.through,
        dispatch_uid="audit_user_permissions",
    )
    pre_save.connect(_device_pre_save, sender=TOTPDevice, dispatch_uid="audit_device_pre_save")
    post_save.connect(_device_post_save, sender=TOTPDevice, dispatch_uid="audit_device_post_save")
    post_delete.connect(
        _device_post_delete, sender=TOTPDevice, dispatch_uid="audit_device_post_delete"
    )
