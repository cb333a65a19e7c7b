"""Creates a new demo merchant and prints its credentials (``--json``: one JSON object)."""

from __future__ import annotations

import json
import secrets
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from merchants.models import Mode
from merchants.services import merchant_create, webhook_settings_set
from payment_items.demo import demo_catalogue_seed
from wallets.demo import demo_wallet_seed


class Command(BaseCommand):
    help = "Create a new demo merchant with keys, a funded test wallet and a demo catalogue."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--webhook-url", default="", help="test-mode webhook URL")

    @transaction.atomic
    def _seed(self, *, webhook_url: str) -> dict[str, Any]:
        suffix = secrets.token_hex(3)
        created = merchant_create(
            name=f"Demo Merchant {suffix}", email=f"demo-{suffix}@example.com"
        )
        merchant = created.merchant
        webhook = webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=webhook_url)
        seeded: dict[str, Any] = {
            "merchant_id": merchant.pk,
            "secret_key": created.test_key.plaintext,
            "live_secret_key": created.live_key.plaintext,
            "webhook_secret": webhook.secret,
        }
        seeded.update(demo_wallet_seed(merchant=merchant))
        seeded.update(demo_catalogue_seed(merchant=merchant))
        return seeded

    def handle(self, *args: Any, **options: Any) -> None:
        seeded = self._seed(webhook_url=options["webhook_url"])
        if options["json"]:
            self.stdout.write(json.dumps(seeded))
            return
        self.stdout.write(self.style.SUCCESS(f"Demo merchant #{seeded['merchant_id']} created."))
        for name, value in seeded.items():
            if name != "merchant_id":
                self.stdout.write(f"  {name}: {value}")
