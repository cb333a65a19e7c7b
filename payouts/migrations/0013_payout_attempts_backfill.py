"""One ``PayoutAttempt`` for each payout sent before attempts existed: attempt 1, under the
payout's ``internal_reference`` and ``provider_name``, so requery keeps asking the provider that
holds it by the reference it knows. A ``reserved`` payout was never sent: it has none yet.

The outcome follows the payout: ``processing`` → in flight, ``dispatched`` → pending,
``ambiguous`` → unknown, ``successful`` → successful, ``failed`` after a dispatch → failed,
``failed`` without one (refused at initiate) → rejected.
"""

from django.db import migrations

OUTCOME_BY_STATUS = {
    "processing": "in_flight",
    "dispatched": "pending",
    "ambiguous": "unknown",
    "successful": "successful",
}
BATCH = 2000


def backfill(apps, schema_editor):
    Payout = apps.get_model("payouts", "Payout")
    PayoutAttempt = apps.get_model("payouts", "PayoutAttempt")
    sent = Payout.objects.exclude(status="reserved").filter(attempts__isnull=True).order_by("pk")
    batch = []
    for payout in sent.iterator(chunk_size=BATCH):
        if payout.status == "failed":
            outcome = "failed" if payout.dispatched_at else "rejected"
        else:
            outcome = OUTCOME_BY_STATUS[payout.status]
        batch.append(
            PayoutAttempt(
                payout_id=payout.pk,
                number=1,
                provider_name=payout.provider_name,
                reference=payout.internal_reference,
                outcome=outcome,
                provider_reference=payout.provider_reference,
                session_id=payout.nip_session_id,
                message=(payout.error_message or "")[:255],
                created_at=payout.dispatched_at or payout.created_at,
                completed_at=payout.completed_at,
            )
        )
        if len(batch) >= BATCH:
            PayoutAttempt.objects.bulk_create(batch)
            batch = []
    PayoutAttempt.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [("payouts", "0012_attempts_routes_circuits")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
