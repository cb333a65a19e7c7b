"""Re-encrypts every value stored encrypted at rest (the webhook signing secrets) under the first
key of ``FIELD_ENCRYPTION_KEYS``, so the keys after it can be removed; plaintext values written
before encryption are encrypted too. Audited with the command-line actor. Output and exit status
as every ops command (``core.commands``): exit 1 when a value cannot be decrypted with any
listed key (its rows are named; the old key must stay until the command exits 0).
``--clear-unreadable`` empties such values instead, when their key is lost for good."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from core.commands import OpsCommand
from core.crypto import SETTING, ValueState, encryption_keys_parse, encryption_keys_problem
from core.fields import EncryptedFieldRotation
from merchants.services import encryption_keys_rotate

ROWS_SHOWN = 20


def _field_lines(rotation: EncryptedFieldRotation) -> list[str]:
    states = rotation.states
    lines = [
        f"{rotation.label}: {rotation.values} value(s): "
        f"{states[ValueState.REENCRYPTED]} re-encrypted from another key, "
        f"{states[ValueState.ENCRYPTED]} plaintext encrypted, "
        f"{states[ValueState.CURRENT]} already under the first key; "
        f"{len(rotation.unreadable)} unreadable."
    ]
    if rotation.unreadable:
        lines.append(
            f"Unreadable: {rotation.label}, row(s) {_rows(rotation.unreadable)}: no key in "
            f"{SETTING} decrypts them."
        )
    if rotation.cleared:
        lines.append(
            f"Cleared: {rotation.label}, row(s) {_rows(rotation.cleared)}: no key decrypted "
            "them; they are empty now (issue new webhook secrets for them)."
        )
    return lines


def _rows(primary_keys: list[str]) -> str:
    more = len(primary_keys) - ROWS_SHOWN
    return ", ".join(primary_keys[:ROWS_SHOWN]) + (f" and {more} more" if more > 0 else "")


class Command(OpsCommand):
    help = (
        f"Re-encrypt every value stored encrypted (webhook secrets) under the first key of "
        f"{SETTING}. To rotate the key: put the new key first in {SETTING}, deploy, run this "
        f"command, and remove the old key once it exits 0."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--clear-unreadable",
            action="store_true",
            help="empty the values no listed key decrypts (their key is lost for good); a "
            "webhook secret so cleared is unset until a new one is issued (audited)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        problem = encryption_keys_problem(encryption_keys_parse(getattr(settings, SETTING, None)))
        if problem:
            raise CommandError(problem)
        rotated = encryption_keys_rotate(
            actor=self.actor(),
            progress=self.progress("re-encrypt", unit="values"),
            clear_unreadable=options["clear_unreadable"],
        )
        summary = (
            f"Re-encrypted under the first of {rotated.keys} key(s) in {SETTING}: "
            f"{rotated.values} stored value(s) in {len(rotated.fields)} field(s); "
            f"{rotated.unreadable} unreadable"
            + (f", {rotated.cleared} cleared." if rotated.cleared else ".")
        )
        if rotated.unreadable:
            summary += " Keep the old keys, add the missing one and run again."
        self.report(
            lines=[line for rotation in rotated.fields for line in _field_lines(rotation)]
            + [summary],
            data={
                "keys": rotated.keys,
                "values": rotated.values,
                "unreadable": rotated.unreadable,
                "cleared": rotated.cleared,
                "fields": [rotation.as_dict() for rotation in rotated.fields],
            },
            failure=(
                f"{rotated.unreadable} stored value(s) cannot be decrypted with any key in "
                f"{SETTING}"
                if rotated.unreadable
                else ""
            ),
        )
