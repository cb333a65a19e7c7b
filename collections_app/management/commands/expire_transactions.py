"""Expires pending collection transactions past their expiry time."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from collections_app.services import transactions_expire_due


class Command(BaseCommand):
    help = (
        "Mark pending collection transactions as expired once past their expiry time "
        "(initiation + COLLECTION_TRANSACTION_EXPIRY_HOURS); the beat task does the same."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--batch-size", type=int, default=200)

    def _progress(self, done: int, total: int) -> None:
        self.stdout.write(f"  checked {done}/{total} due transactions")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        try:
            summary = transactions_expire_due(
                batch_size=options["batch_size"], on_progress=self._progress
            )
        except Exception as error:
            raise CommandError(f"expiring transactions failed: {error}") from error
        self.stdout.write(
            self.style.SUCCESS(
                f"Expired {summary.expired} of {summary.due} due pending transactions "
                f"(expiry window {settings.COLLECTION_TRANSACTION_EXPIRY_HOURS} h)."
            )
        )
