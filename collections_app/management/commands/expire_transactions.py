"""Expires pending collection transactions past their expiry time and says how many pending ones
are left and when the next expires. Output and exit status as every ops command
(``core.commands``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from collections_app.services import transactions_expire_due
from core.commands import OpsCommand


class Command(OpsCommand):
    help = (
        "Mark pending collection transactions as expired once past their expiry time "
        "(initiation + COLLECTION_TRANSACTION_EXPIRY_HOURS); the beat task does the same."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=200)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        try:
            summary = transactions_expire_due(
                batch_size=options["batch_size"],
                on_progress=self.progress("expire", unit="transactions"),
            )
        except Exception as error:
            raise CommandError(f"expiring transactions failed: {error}") from error
        self.report(lines=summary.summary(), data=summary.as_dict())
