
DROP TRIGGER IF EXISTS wallets_ledgerentry_append_only ON wallets_ledgerentry;
DROP FUNCTION IF EXISTS wallets_ledgerentry_append_only();
