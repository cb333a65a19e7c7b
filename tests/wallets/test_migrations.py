"""The migration that scopes funding references by mode keeps every existing funding: each gets
its wallet's mode, and the new constraints hold afterwards."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from merchants.models import Mode
from tests.wallets.factories import FundingTransferFactory, LedgerEntryFactory, WalletFactory
from wallets.models import FundingTransfer

BEFORE = [("wallets", "0005_admin_permissions")]


def _migrate(targets: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    """To ``targets``, or forward to the latest migration of every app."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets if targets is not None else executor.loader.graph.leaf_nodes())
    return executor


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_existing_fundings_keep_their_rows_and_get_their_wallets_mode() -> None:
    test_wallet = WalletFactory(mode=Mode.TEST)
    live_wallet = WalletFactory(mode=Mode.LIVE)
    entries = {
        "OLD-TEST": LedgerEntryFactory(wallet=test_wallet, reference="OLD-TEST"),
        "OLD-LIVE": LedgerEntryFactory(wallet=live_wallet, reference="OLD-LIVE"),
    }
    try:
        old_apps = _migrate(BEFORE).loader.project_state(BEFORE).apps
        OldFunding = old_apps.get_model("wallets", "FundingTransfer")
        for reference, wallet in (("OLD-TEST", test_wallet), ("OLD-LIVE", live_wallet)):
            OldFunding.objects.create(
                provider_reference=reference,
                wallet_id=wallet.pk,
                ledger_entry_id=entries[reference].pk,
                amount=Decimal("10.00"),
                source="provider",
                receiving_account_number=wallet.static_account_number,
                raw_payload={"reference": reference},
            )
    finally:
        _migrate()

    kept = {row.provider_reference: row for row in FundingTransfer.objects.all()}
    assert set(kept) == {"OLD-TEST", "OLD-LIVE"}
    assert (kept["OLD-TEST"].mode, kept["OLD-LIVE"].mode) == (Mode.TEST, Mode.LIVE)
    assert kept["OLD-LIVE"].raw_payload == {"reference": "OLD-LIVE"}
    assert kept["OLD-TEST"].amount == Decimal("10.00")

    # Afterwards: a test reference may appear in live once, never twice among live wallets.
    FundingTransferFactory(wallet=WalletFactory(mode=Mode.LIVE), provider_reference="OLD-TEST")
    with pytest.raises(IntegrityError), transaction.atomic():
        FundingTransferFactory(wallet=WalletFactory(mode=Mode.LIVE), provider_reference="OLD-LIVE")
