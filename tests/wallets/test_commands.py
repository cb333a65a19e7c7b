from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from merchants.models import Mode
from tests.wallets.factories import LedgerEntryFactory, WalletFactory
from wallets.models import Wallet

pytestmark = pytest.mark.django_db


def _reconcile(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("reconcile_wallets", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_reconcile_reports_success_when_ledgers_match(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    fund(test_wallet, "0.50")
    out, _err = _reconcile()
    assert "Reconciled 2 wallet(s): 2 match, 0 mismatch; 0 ledger snapshot mismatch(es)." in out


def test_reconcile_fails_when_a_balance_disagrees_with_its_ledger(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    Wallet.objects.filter(pk=test_wallet.pk).update(available_balance=Decimal("150.00"))
    err = StringIO()
    with pytest.raises(CommandError, match="1 mismatch"):
        call_command("reconcile_wallets", stdout=StringIO(), stderr=err)
    assert f"wallet {test_wallet.pk} (test): available 150.00 vs ledger 100.00" in err.getvalue()


def test_reconcile_fails_when_a_reserved_balance_disagrees(test_wallet) -> None:
    Wallet.objects.filter(pk=test_wallet.pk).update(reserved_balance=Decimal("1.00"))
    with pytest.raises(CommandError, match="1 mismatch"):
        _reconcile()


def test_reconcile_fails_when_an_entry_snapshot_disagrees_with_the_running_sum(test_wallet):
    LedgerEntryFactory(wallet=test_wallet, available_balance_after=Decimal("11.00"))
    Wallet.objects.filter(pk=test_wallet.pk).update(available_balance=Decimal("10.00"))
    with pytest.raises(CommandError, match="0 mismatch; 1 ledger snapshot mismatch"):
        _reconcile()


def test_reconcile_exits_non_zero_from_the_command_line(test_wallet) -> None:
    from django.core.management import ManagementUtility

    Wallet.objects.filter(pk=test_wallet.pk).update(available_balance=Decimal("1.00"))
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "reconcile_wallets", "--no-progress"]).execute()
    assert exited.value.code == 1


def test_reconcile_shows_progress_on_many_wallets(fund) -> None:
    for wallet in WalletFactory.create_batch(60, mode=Mode.TEST):
        fund(wallet, "1.00")
    out, err = _reconcile()
    assert "60/60 wallets" in err
    assert "Reconciled 60 wallet(s): 60 match" in out
    _out, quiet = _reconcile("--no-progress")
    assert quiet == ""


def test_seed_demo_funds_the_test_wallet_through_the_funding_service(db) -> None:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    seeded = json.loads(out.getvalue())
    assert seeded["wallet_available_balance"] == "1000000.00"
    wallet = Wallet.objects.get(merchant_id=seeded["merchant_id"], mode=Mode.TEST)
    assert wallet.available_balance == Decimal("1000000.00")
    assert wallet.funding_transfers.count() == 1
    _reconcile()
