"""The back-office roles as staff groups, each with exactly the permissions it needs.

A frozen copy of ``audit.roles.ROLES`` at the time of this migration (a migration must not change
with the code); ``manage.py staff_role sync`` applies later changes of ``audit/roles.py``.
Permissions are created here first: Django would otherwise create them only after every
migration has run.
"""

from django.db import migrations

FINANCE_VIEW = [
    "payouts.view_payout",
    "payouts.view_payoutresolution",
    "payouts.view_payoutresolutionproposal",
    "payouts.export_payouts",
    "wallets.view_wallet",
    "wallets.view_ledgerentry",
    "wallets.view_fundingtransfer",
    "webhooks.view_event",
    "webhooks.view_webhookdelivery",
    "webhooks.view_webhookdeliveryattempt",
    "audit.view_auditrecord",
    "audit.export_audit_records",
]

ROLES = {
    "Finance viewer": FINANCE_VIEW,
    "Finance operator": [
        *FINANCE_VIEW,
        "payouts.requery_payout",
        "payouts.propose_resolution",
    ],
    "Finance approver": [*FINANCE_VIEW, "payouts.approve_resolution"],
    "Ops": [
        "merchants.view_merchant",
        "merchants.view_webhooksettings",
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


def delete_roles(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.using(schema_editor.connection.alias).filter(name__in=list(ROLES)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0002_append_only_trigger"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("merchants", "0002_admin_permissions"),
        ("wallets", "0005_admin_permissions"),
        ("webhooks", "0003_admin_permissions"),
        ("payouts", "0003_resolution_proposal_and_admin_permissions"),
        ("payment_items", "0002_money_minor_units"),
        ("collections_app", "0005_events_move_to_webhooks"),
    ]

    operations = [migrations.RunPython(create_roles, delete_roles)]
