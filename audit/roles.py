"""The back-office roles: one staff group each, with exactly the permissions it needs.

``ROLES`` is the current definition; the latest ``audit/migrations/*_staff_roles*.py`` holds a
frozen copy of it (``0003_staff_roles`` created the groups, later ones bring them up to date),
and ``manage.py staff_role sync`` brings existing groups back in line after a change here.
A superuser holds every permission and needs no role.
"""

from __future__ import annotations

from dataclasses import dataclass

# Setting another user's password or TOTP devices (``audit.admin``): the security admin's.
STAFF_CREDENTIALS_PERMISSION = "audit.reset_staff_credentials"


@dataclass(frozen=True)
class Role:
    key: str
    group_name: str
    description: str
    permissions: tuple[str, ...]  # "app_label.codename"


FINANCE_VIEW = (
    "payouts.view_payout",
    "payouts.view_payoutresolution",
    "payouts.view_payoutresolutionproposal",
    "payouts.view_payoutbatchproposal",
    "payouts.view_providertransfereventrecord",
    "payouts.view_payoutattempt",
    "payouts.view_payoutprovidercircuit",
    "payouts.export_payouts",
    "wallets.view_wallet",
    "wallets.view_ledgerentry",
    "wallets.view_fundingtransfer",
    "webhooks.view_event",
    "webhooks.view_webhookdelivery",
    "webhooks.view_webhookdeliveryattempt",
    "audit.view_auditrecord",
    "audit.export_audit_records",
    "reconciliation.view_reconciliationrun",
    "reconciliation.view_reconciliationitem",
    "collections_app.view_collectiontransaction",
    "beneficiaries.view_beneficiary",
    "settlements.view_settlement",
    "settlements.view_settlementshare",
    "settlements.view_platformledgerentry",
    "refunds.view_refund",
    "sweeps.view_settlementaccount",
    "sweeps.view_sweepschedule",
    "sweeps.view_sweep",
)

ROLES: tuple[Role, ...] = (
    Role(
        key="finance_viewer",
        group_name="Finance viewer",
        description="Sees payouts, wallets, the ledger, statements and their reconciliation, "
        "collections, settlements, refunds, sweeps and the platform ledger, events and the audit "
        "trail; "
        "exports CSV",
        permissions=FINANCE_VIEW,
    ),
    Role(
        key="finance_operator",
        group_name="Finance operator",
        description="Finance viewer, plus requery payouts, import statements, clear "
        "reconciliation exceptions, propose a manual resolution and propose a bulk payout",
        permissions=(
            *FINANCE_VIEW,
            "payouts.requery_payout",
            "payouts.propose_resolution",
            "reconciliation.import_statement",
            "reconciliation.clear_exception",
        ),
    ),
    Role(
        key="finance_approver",
        group_name="Finance approver",
        description="Finance viewer, plus approve or reject another user's proposed resolution "
        "or bulk payout, refund a paid collection, and re-send a settlement share's payout",
        permissions=(*FINANCE_VIEW, "payouts.approve_resolution"),
    ),
    Role(
        key="ops",
        group_name="Ops",
        description="Sees merchants, events, the catalogue and collections; resends webhooks; "
        "edits payment items and their categories; edits payout routes and sees provider health",
        permissions=(
            "merchants.view_merchant",
            "merchants.view_webhooksettings",
            "beneficiaries.view_beneficiary",
            "webhooks.view_event",
            "webhooks.view_webhookdelivery",
            "webhooks.view_webhookdeliveryattempt",
            "webhooks.resend_event",
            "payment_items.view_business",
            "payment_items.view_subaccount",
            "payment_items.view_transactionsplit",
            "payment_items.view_transactionsplitshare",
            "payment_items.view_category",
            "payment_items.add_category",
            "payment_items.change_category",
            "payment_items.view_subcategory",
            "payment_items.add_subcategory",
            "payment_items.change_subcategory",
            "payment_items.view_paymentitem",
            "payment_items.add_paymentitem",
            "payment_items.change_paymentitem",
            "collections_app.view_collectiontransaction",
            "collections_app.view_transactionattempt",
            "collections_app.view_customer",
            "payouts.view_payoutroute",
            "payouts.add_payoutroute",
            "payouts.change_payoutroute",
            "payouts.delete_payoutroute",
            "payouts.view_payoutprovidercircuit",
        ),
    ),
    Role(
        key="security_admin",
        group_name="Security admin",
        description="Creates merchants, rotates secret keys and webhook secrets, sets webhook "
        "URLs, activates and deactivates wallets; sets other staff users' passwords and TOTP "
        "devices (never their roles or flags)",
        permissions=(
            "merchants.view_merchant",
            "merchants.add_merchant",
            "merchants.change_merchant",
            "merchants.view_secretkey",
            "merchants.rotate_secret_key",
            "merchants.view_webhooksettings",
            "merchants.add_webhooksettings",
            "merchants.change_webhooksettings",
            "merchants.rotate_webhook_secret",
            "wallets.view_wallet",
            "wallets.change_wallet_status",
            "audit.view_auditrecord",
            "auth.view_user",
            STAFF_CREDENTIALS_PERMISSION,
            "otp_totp.view_totpdevice",
            "otp_totp.add_totpdevice",
            "otp_totp.change_totpdevice",
            "otp_totp.delete_totpdevice",
        ),
    ),
)

ROLES_BY_KEY: dict[str, Role] = {role.key: role for role in ROLES}


def role_get(key: str) -> Role:
    """The role named by its key (``finance_approver``) or its group name (``Finance approver``)."""
    normalised = key.strip().lower().replace(" ", "_").replace("-", "_")
    try:
        return ROLES_BY_KEY[normalised]
    except KeyError:
        raise KeyError(f"unknown role {key!r}; one of: {', '.join(sorted(ROLES_BY_KEY))}") from None
