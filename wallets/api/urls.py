"""The wallet routes: the bank list of the spec, and the extensions (the wallet and its ledger,
statements, low-balance alerts, funding)."""

from django.urls import path

from wallets.api.views import (
    BankListApi,
    FundingNotificationApi,
    NameEnquiryApi,
    TestWalletFundApi,
    WalletAlertsApi,
    WalletDetailApi,
    WalletLedgerListApi,
    WalletStatementApi,
    WalletStatementCsvApi,
)

urlpatterns = [
    path("transactions/in/merchant-wallet", WalletDetailApi.as_view(), name="wallet-detail"),
    path(
        "transactions/in/merchant-wallet/ledger",
        WalletLedgerListApi.as_view(),
        name="wallet-ledger",
    ),
    path(
        "transactions/in/merchant-wallet/statement",
        WalletStatementApi.as_view(),
        name="wallet-statement",
    ),
    path(
        "transactions/in/merchant-wallet/statement/csv",
        WalletStatementCsvApi.as_view(),
        name="wallet-statement-csv",
    ),
    path(
        "transactions/in/merchant-wallet/alerts",
        WalletAlertsApi.as_view(),
        name="wallet-alerts",
    ),
    path(
        "transactions/in/merchant-wallet/payouts/name-enquiry",
        NameEnquiryApi.as_view(),
        name="payout-name-enquiry",
    ),
    path("transactions/bank", BankListApi.as_view(), name="bank-list"),
    path("webhooks/funding", FundingNotificationApi.as_view(), name="funding-notification"),
    path("test-helpers/wallet/fund", TestWalletFundApi.as_view(), name="test-wallet-fund"),
]
