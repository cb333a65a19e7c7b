"""Staff users with roles or single permissions, and audit records."""

from __future__ import annotations

from typing import Any

import factory
from django.contrib.auth.models import Group, Permission, User

from audit.models import AuditRecord
from audit.roles import role_get
from audit.services import staff_roles_sync


def permission_get(name: str) -> Permission:
    """``name`` is ``"app_label.codename"``."""
    app_label, codename = name.split(".", 1)
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)


class StaffUserFactory(factory.django.DjangoModelFactory):
    """A staff user: ``StaffUserFactory(roles=["finance_viewer"])`` puts them in role groups,
    ``permissions=["payouts.view_payout"]`` grants single permissions."""

    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"staff{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    is_staff = True

    @factory.post_generation
    def roles(self, create: bool, extracted: Any, **kwargs: Any) -> None:
        for key in extracted or []:
            name = role_get(key).group_name
            group = Group.objects.filter(name=name).first()
            if group is None:
                staff_roles_sync()
                group = Group.objects.get(name=name)
            self.groups.add(group)

    @factory.post_generation
    def permissions(self, create: bool, extracted: Any, **kwargs: Any) -> None:
        for name in extracted or []:
            self.user_permissions.add(permission_get(name))


class AuditRecordFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AuditRecord

    actor = factory.SubFactory(StaffUserFactory)
    actor_label = factory.LazyAttribute(lambda o: o.actor.username if o.actor else "system")
    action = "merchants.merchant.change"
    object_type = "merchants.merchant"
    object_id = "1"
    object_repr = "Ade Stores (#1)"
    before = factory.LazyFunction(lambda: {"name": "Ade"})
    after = factory.LazyFunction(lambda: {"name": "Ade Stores"})
    reason = "Renamed at the merchant's request"
