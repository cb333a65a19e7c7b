"""``manage.py rotate_secret_key``: revokes a merchant's active key of one mode and prints the new
one once, audited."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from audit.services import audit_record
from merchants.models import Merchant, Mode, SecretKey
from merchants.services import secret_key_rotate


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
        with transaction.atomic():
            old_prefix = (
                SecretKey.objects.filter(merchant=merchant, mode=mode, revoked_at__isnull=True)
                .values_list("prefix", flat=True)
                .first()
            )
            issued = secret_key_rotate(merchant=merchant, mode=mode)
            audit_record(
                actor=f"manage.py rotate_secret_key ({getpass.getuser()})",
                action="merchants.merchant.rotate_secret_key",
                obj=merchant,
                before={"mode": mode, "key_prefix": old_prefix},
                after={"mode": mode, "key_prefix": issued.secret_key.prefix},
                reason=options["reason"],
            )
        self.stdout.write(issued.plaintext)
        self.stderr.write(f"rotated {mode} key of merchant {merchant.pk}; the old key is revoked")
