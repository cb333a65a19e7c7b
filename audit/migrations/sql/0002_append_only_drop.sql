
DROP TRIGGER IF EXISTS audit_auditrecord_append_only ON audit_auditrecord;
DROP FUNCTION IF EXISTS audit_auditrecord_append_only();
