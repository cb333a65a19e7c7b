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


def test_reconcile_names_the_merchant_and_the_difference(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    Wallet.objects.filter(pk=test_wallet.pk).update(available_balance=Decimal("150.00"))
    out = StringIO()
    with pytest.raises(CommandError, match="wallet reconciliation found mismatches"):
        call_command("reconcile_wallets", stdout=out, stderr=StringIO())
    merchant = test_wallet.merchant
    assert out.getvalue().splitlines() == [
        f"Mismatch: wallet {test_wallet.pk} of {merchant.name} (merchant {merchant.pk}), test: "
        "available: wallet ₦150.00 vs ledger ₦100.00, difference +₦50.00; "
        "reserved: wallet ₦0.00 vs ledger ₦0.00, difference ₦0.00",
        "Reconciled 2 wallet(s): 1 match, 1 mismatch; 0 ledger snapshot mismatch(es).",
    ]


def test_reconcile_json_gives_the_mismatch_with_amounts_as_strings(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    Wallet.objects.filter(pk=test_wallet.pk).update(reserved_balance=Decimal("1.00"))
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("reconcile_wallets", "--json", stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue())
    assert result["wallets"] == 2
    assert result["matching"] == 1
    assert result["ok"] is False
    assert result["mismatches"] == [
        {
            "wallet_id": test_wallet.pk,
            "merchant_id": test_wallet.merchant_id,
            "merchant_name": test_wallet.merchant.name,
            "mode": "test",
            "currency": "NGN",
            "available_balance": "100.00",
            "ledger_available": "100.00",
            "available_difference": "0.00",
            "reserved_balance": "1.00",
            "ledger_reserved": "0.00",
            "reserved_difference": "1.00",
        }
    ]


def test_reconcile_lists_the_first_entries_whose_snapshot_disagrees(test_wallet) -> None:
    entry = LedgerEntryFactory(wallet=test_wallet, available_balance_after=Decimal("11.00"))
    Wallet.objects.filter(pk=test_wallet.pk).update(available_balance=Decimal("10.00"))
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("reconcile_wallets", stdout=out, stderr=StringIO())
    assert out.getvalue().splitlines()[-2:] == [
        "Ledger snapshot mismatch: 1 entry(ies) whose balance-after differs from the running "
        f"sum, first entries {entry.pk}",
        "Reconciled 2 wallet(s): 2 match, 0 mismatch; 1 ledger snapshot mismatch(es).",
    ]


def test_reconcile_exits_1_from_the_command_line_with_the_summary(test_wallet, capsys) -> None:
    from django.core.management import ManagementUtility

    Wallet.objects.filter(pk=test_wallet.pk).update(available_balance=Decimal("1.00"))
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "reconcile_wallets", "--no-progress"]).execute()
    assert exited.value.code == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == (
        "Reconciled 2 wallet(s): 1 match, 1 mismatch; 0 ledger snapshot mismatch(es)."
    )
    assert "CommandError: wallet reconciliation found mismatches" in captured.err


def test_reconcile_shows_progress_on_stderr_only(fund) -> None:
    for wallet in WalletFactory.create_batch(60, mode=Mode.TEST):
        fund(wallet, "1.00")
    out, err = _reconcile()
    assert "60/60 wallets" in err
    assert out == "Reconciled 60 wallet(s): 60 match, 0 mismatch; 0 ledger snapshot mismatch(es).\n"
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
