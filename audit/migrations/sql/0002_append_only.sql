
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
