"""``manage.py rotate_secret_key``: revokes a merchant's active key of one mode and prints the new
one once, audited."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from merchants.models import Merchant, Mode
from merchants.services import secret_key_rotate_recorded


class Command(BaseCommand):
    help = (
        "Revoke a merchant's active secret key of one mode and print the new one (shown once). "
        "The rotation is written to the audit trail with --reason."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--merchant", type=int, required=True, help="merchant id")
        parser.add_argument("--mode", choices=[Mode.TEST, Mode.LIVE], required=True)
        parser.add_argument(
            "--reason", default="rotated from the command line", help="why (audit trail)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            merchant = Merchant.objects.get(pk=options["merchant"])
        except Merchant.DoesNotExist as error:
            raise CommandError(f"merchant {options['merchant']} does not exist") from error
        if merchant.is_platform:
            raise CommandError(f"merchant {merchant.pk} is the platform merchant: it has no keys")
        mode = options["mode"]
        issued = secret_key_rotate_recorded(
            merchant=merchant,
            mode=mode,
            actor=f"manage.py rotate_secret_key ({getpass.getuser()})",
            reason=options["reason"],
        )
        self.stdout.write(issued.plaintext)
        self.stderr.write(f"rotated {mode} key of merchant {merchant.pk}; the old key is revoked")
