"""The database refuses UPDATE and DELETE on audit records, whoever issues them (raw SQL included).

TRUNCATE (used by test flushes) is not affected.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION audit_auditrecord_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit records are append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS audit_auditrecord_append_only ON audit_auditrecord;
CREATE TRIGGER audit_auditrecord_append_only
    BEFORE UPDATE OR DELETE ON audit_auditrecord
    FOR EACH ROW EXECUTE FUNCTION audit_auditrecord_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS audit_auditrecord_append_only ON audit_auditrecord;
DROP FUNCTION IF EXISTS audit_auditrecord_append_only();
"""


def create_trigger(apps, schema_editor):
    schema_editor.execute(CREATE, params=None)


def drop_trigger(apps, schema_editor):
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunPython(create_trigger, drop_trigger)]
