"""Development staff users, one per back-office role, so a fresh install can be signed in to.

    manage.py seed_staff --dev           # prints each created user and its password
    manage.py seed_staff --dev --json    # one JSON object: {"users": [{username, role, password}]}

Refused unless ``DEBUG`` is on (``make run``'s local settings): a production database never gets
users with known passwords. A user that already exists is left as it is (its password is not
printed again), so running it twice creates nothing more. ``make run`` keeps the first run's
output in ``var/staff_credentials.json`` (mode 600).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from audit.actors import acting_as
from audit.roles import ROLES_BY_KEY
from audit.services import staff_role_grant

ACTOR = "manage.py seed_staff --dev"

# One development user per role; ``amaka`` is the finance operator the docs' examples use.
DEV_STAFF_USERS: tuple[tuple[str, str], ...] = (
    ("tunde", "finance_viewer"),
    ("amaka", "finance_operator"),
    ("chidi", "finance_approver"),
    ("bola", "ops"),
    ("ngozi", "security_admin"),
)


class Command(BaseCommand):
    help = "Create one development staff user per back-office role (DEBUG only)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dev", action="store_true", help="required: these users are for development only"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    @transaction.atomic
    def _seed(self) -> list[dict[str, str]]:
        user_model = get_user_model()
        created: list[dict[str, str]] = []
        for username, role_key in DEV_STAFF_USERS:
            role = ROLES_BY_KEY[role_key]
            if user_model.objects.filter(**{user_model.USERNAME_FIELD: username}).exists():
                continue
            password = secrets.token_urlsafe(12)
            with acting_as(ACTOR):
                user = user_model.objects.create_user(
                    username=username, email=f"{username}@example.com", password=password
                )
            staff_role_grant(
                user=user, role_key=role.key, actor=ACTOR, reason="development staff user"
            )
            created.append({"username": username, "role": role.key, "password": password})
        return created

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["dev"]:
            raise CommandError("pass --dev: these users have printed passwords (development only)")
        if not settings.DEBUG:
            raise CommandError("refused: DEBUG is off; development staff users are never created")
        created = self._seed()
        if options["json"]:
            self.stdout.write(json.dumps({"users": created}))
            return
        if not created:
            self.stdout.write("every development staff user exists already; nothing created")
        for user in created:
            self.stdout.write(f"{user['username']} ({user['role']}): {user['password']}")
