from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from merchants.models import Merchant, Mode
from merchants.services import secret_key_rotate


class Command(BaseCommand):
    help = "Revoke a merchant's active secret key of one mode and print the new one (shown once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--merchant", type=int, required=True, help="merchant id")
        parser.add_argument("--mode", choices=[Mode.TEST, Mode.LIVE], required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            merchant = Merchant.objects.get(pk=options["merchant"])
        except Merchant.DoesNotExist as error:
            raise CommandError(f"merchant {options['merchant']} does not exist") from error
        issued = secret_key_rotate(merchant=merchant, mode=options["mode"])
        self.stdout.write(issued.plaintext)
        self.stderr.write(
            f"rotated {options['mode']} key of merchant {merchant.pk}; the old key is revoked"
        )
