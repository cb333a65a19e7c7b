"""Two-person manual resolution: the proposal model and the back-office permissions.

Payouts failed by hand before this migration carried the staff's internal reason in their
``error_message`` (shown to the merchant); it becomes the plain "Transfer failed". The single-user
``resolve_payout`` permission goes: resolution now needs a proposer and a different approver.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


LEAKED_PREFIX = "Resolved as failed by finance"
MERCHANT_FAILURE_MESSAGE = "Transfer failed"


def hide_internal_reasons(apps, schema_editor):
    Payout = apps.get_model("payouts", "Payout")
    Payout.objects.filter(error_message__startswith=LEAKED_PREFIX).update(
        error_message=MERCHANT_FAILURE_MESSAGE
    )


def drop_single_user_resolution_permission(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    Permission.objects.filter(
        content_type__app_label="payouts", codename="resolve_payout"
    ).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('payouts', '0002_money_minor_units'),
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='payout',
            options={'ordering': ['-created_at', '-id'], 'permissions': [('requery_payout', 'Can requery a payout with the provider'), ('export_payouts', 'Can export payouts as CSV'), ('propose_resolution', 'Can propose a manual resolution of an ambiguous payout'), ('approve_resolution', 'Can approve or reject a proposed payout resolution')]},
        ),
        migrations.CreateModel(
            name='PayoutResolutionProposal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('proposed_status', models.CharField(choices=[('successful', 'Successful'), ('failed', 'Failed')], max_length=12)),
                ('reason', models.TextField(help_text='Internal: what was checked and with whom')),
                ('provider_reference', models.CharField(blank=True, default='', help_text="Evidence: the provider's reference", max_length=100)),
                ('nip_session_id', models.CharField(blank=True, default='', help_text='Evidence: the NIP session id', max_length=64)),
                ('proposed_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('decision', models.CharField(blank=True, choices=[('approved', 'Approved'), ('rejected', 'Rejected')], default='', max_length=10)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('decision_note', models.TextField(blank=True, default='')),
                ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='payout_resolution_decisions', to=settings.AUTH_USER_MODEL)),
                ('payout', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='resolution_proposals', to='payouts.payout')),
                ('proposed_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='payout_resolution_proposals', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-proposed_at', '-id'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('decision', '')), fields=('payout',), name='one_open_resolution_proposal_per_payout'), models.CheckConstraint(condition=models.Q(('reason', ''), _negated=True), name='resolution_proposal_reason_required'), models.CheckConstraint(condition=models.Q(('proposed_status__in', ['successful', 'failed'])), name='resolution_proposal_status_valid'), models.CheckConstraint(condition=models.Q(models.Q(('decided_at__isnull', True), ('decided_by__isnull', True), ('decision', '')), models.Q(('decided_at__isnull', False), ('decided_by__isnull', False), ('decision__in', ['approved', 'rejected'])), _connector='OR'), name='resolution_proposal_decision_complete'), models.CheckConstraint(condition=models.Q(('decided_by', models.F('proposed_by')), _negated=True), name='resolution_proposal_decided_by_another_user')],
            },
        ),
        migrations.RunPython(hide_internal_reasons, migrations.RunPython.noop),
        migrations.RunPython(drop_single_user_resolution_permission, migrations.RunPython.noop),
    ]
