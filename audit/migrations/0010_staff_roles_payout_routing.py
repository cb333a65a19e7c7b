"""The staff roles brought up to date for payout attempts and routing: finance roles see a
payout's attempts and the providers' health; ops edit payout routes and see provider health. A
frozen copy of ``audit.roles.ROLES`` at the time of this migration.
"""

from django.db import migrations

ROLES = {
    "Finance viewer": [
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
    ],
    "Finance operator": [
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
        "payouts.requery_payout",
        "payouts.propose_resolution",
        "reconciliation.import_statement",
        "reconciliation.clear_exception",
    ],
    "Finance approver": [
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
        "payouts.approve_resolution",
    ],
    "Ops": [
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
    ],
    "Security admin": [
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
        "audit.reset_staff_credentials",
        "otp_totp.view_totpdevice",
        "otp_totp.add_totpdevice",
        "otp_totp.change_totpdevice",
        "otp_totp.delete_totpdevice",
    ],
}


def create_roles(apps, schema_editor):
    from django.apps import apps as global_apps
    from django.contrib.auth.management import create_permissions

    using = schema_editor.connection.alias
    for app_config in global_apps.get_app_configs():
        create_permissions(app_config, verbosity=0, apps=apps, using=using)

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group_name, names in ROLES.items():
        permissions = []
        for name in names:
            app_label, codename = name.split(".", 1)
            permissions.append(
                Permission.objects.using(using).get(
                    content_type__app_label=app_label, codename=codename
                )
            )
        group, _ = Group.objects.using(using).get_or_create(name=group_name)
        group.permissions.set(permissions)


def noop(apps, schema_editor):
    """Going back leaves the groups as they are (0003 reversed deletes them)."""


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0009_staff_roles_provider_events"),
        ("payouts", "0013_payout_attempts_backfill"),
    ]

    operations = [migrations.RunPython(create_roles, noop)]
