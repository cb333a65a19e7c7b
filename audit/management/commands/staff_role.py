"""Back-office roles from the command line.

    manage.py staff_role list
    manage.py staff_role grant alice finance_approver --reason "Approver for the March close"
    manage.py staff_role revoke alice finance_approver --reason "Left the finance team"
    manage.py staff_role sync

``grant`` also makes the user staff (able to sign in to the admin). Every grant and revoke is
recorded in the audit trail with the operating-system user who ran the command.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.actors import command_actor
from audit.roles import ROLES, role_get
from audit.services import staff_role_grant, staff_role_revoke, staff_roles_sync
from core.exceptions import ApplicationError


class Command(BaseCommand):
    help = "List, grant, revoke or re-sync the back-office roles (staff groups)."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="command", required=True)
        commands.add_parser("list", help="roles, what they may do, and their members")
        commands.add_parser("sync", help="set every role group's permissions from audit/roles.py")
        for name in ("grant", "revoke"):
            sub = commands.add_parser(name, help=f"{name} a role")
            sub.add_argument("username")
            sub.add_argument("role", help=", ".join(role.key for role in ROLES))
            sub.add_argument("--reason", default="", help="kept in the audit trail")

    def handle(self, *args: Any, **options: Any) -> None:
        command = options["command"]
        if command == "list":
            self._list()
        elif command == "sync":
            try:
                groups = staff_roles_sync()
            except ApplicationError as error:
                raise CommandError(error.message) from error
            self.stdout.write(f"synced {len(groups)} role group(s)")
        else:
            self._grant_or_revoke(command, options)

    def _list(self) -> None:
        from django.contrib.auth.models import Group

        members = {
            group.name: sorted(user.get_username() for user in group.user_set.all())
            for group in Group.objects.prefetch_related("user_set")
        }
        for role in ROLES:
            self.stdout.write(f"{role.key} ({role.group_name}): {role.description}")
            self.stdout.write(f"  members: {', '.join(members.get(role.group_name, [])) or '—'}")

    def _grant_or_revoke(self, command: str, options: dict[str, Any]) -> None:
        try:
            role = role_get(options["role"])
        except KeyError as error:
            raise CommandError(str(error.args[0])) from error
        user_model = get_user_model()
        try:
            user = user_model.objects.get(**{user_model.USERNAME_FIELD: options["username"]})
        except user_model.DoesNotExist as error:
            raise CommandError(f"user {options['username']!r} does not exist") from error
        service = staff_role_grant if command == "grant" else staff_role_revoke
        try:
            service(
                user=user,
                role_key=role.key,
                actor=command_actor("staff_role"),
                reason=options["reason"],
            )
        except ApplicationError as error:
            raise CommandError(error.message) from error
        verb = "granted" if command == "grant" else "revoked"
        self.stdout.write(f"{verb} {role.key} ({role.group_name}) for {user.get_username()}")
