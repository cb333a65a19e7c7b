
CREATE OR REPLACE FUNCTION wallets_ledgerentry_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger entries are append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS wallets_ledgerentry_append_only ON wallets_ledgerentry;
CREATE TRIGGER wallets_ledgerentry_append_only
    BEFORE UPDATE OR DELETE ON wallets_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION wallets_ledgerentry_append_only();
