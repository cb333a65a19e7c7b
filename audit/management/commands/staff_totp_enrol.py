"""Enrols a TOTP device for a staff user and prints its provisioning URI, once.

The devices it deletes (``--replace``) and the one it adds are recorded in the audit trail
(``audit.signals``) with ``manage.py staff_totp_enrol (<OS user>)`` as the actor."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.actors import acting_as
from core.commands import command_actor

DEFAULT_DEVICE_NAME = "authenticator"


class Command(BaseCommand):
    help = (
        "Enrol a TOTP device (authenticator app) for a staff user and print its otpauth:// "
        "provisioning URI; it is shown only this once. Refuses a user who already has one "
        "unless --replace is given (the old device stops working)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True, help="the staff user's username")
        parser.add_argument(
            "--name", default=DEFAULT_DEVICE_NAME, help="the device's name in the admin"
        )
        parser.add_argument(
            "--replace", action="store_true", help="delete the user's TOTP devices first"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["username"]
        user_model = get_user_model()
        with transaction.atomic(), acting_as(command_actor("staff_totp_enrol")):
            try:
                user = user_model._default_manager.select_for_update().get(
                    **{user_model.USERNAME_FIELD: username}
                )
            except user_model.DoesNotExist as error:
                raise CommandError(f"there is no user {username!r}") from error
            if not (user.is_active and user.is_staff):
                raise CommandError(f"user {username!r} is not staff (or is inactive)")
            existing = TOTPDevice.objects.devices_for_user(user, confirmed=None)
            if existing.exists():
                if not options["replace"]:
                    raise CommandError(
                        f"user {username!r} already has a TOTP device; "
                        "use --replace to enrol a new one (the old one stops working)"
                    )
                existing.delete()
            device = TOTPDevice.objects.create(user=user, name=options["name"], confirmed=True)
        self.stdout.write(device.config_url)
        self.stderr.write(
            f"enrolled TOTP device {device.name!r} for {username!r}; add the URI above to an "
            "authenticator app now: it is not shown again"
        )
