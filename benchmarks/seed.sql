-- Benchmark data, generated in SQL (never through the API).
--   merchants 1..:n_wallets      one funded test wallet each (id = merchant id), test key
--                                sk_test_bench_<i>_<salt>; a live wallet each, unfunded
--   merchant :n_wallets + 1      the "list" merchant: its test wallet holds :n_payouts payouts
--                                (every 5th failed, the rest successful), one per minute back
--                                from now, each with its reserve and debit/reversal ledger entries
-- Every balance equals its ledger, and every snapshot the running sum, as the services would
-- have left them: reconcile_wallets passes on this data.
\set ON_ERROR_STOP on
\set list_id (:n_wallets + 1)
-- Money columns hold integer kobo (core.fields.MoneyField): ₦1,000,000,000,000.00 funded,
-- payouts of ₦1,000.00 with a ₦10.00 fee.
\set funded 100000000000000::bigint
\set amount 100000::bigint
\set fee 1000::bigint
\set total 101000::bigint
BEGIN;
SET LOCAL synchronous_commit = off;

INSERT INTO merchants_merchant (id, name, email, is_active, is_platform, created_at, updated_at)
SELECT i, 'Bench Merchant ' || i, 'bench' || i || '@example.com', true, false, now(), now()
FROM generate_series(1, :list_id) AS i;

INSERT INTO merchants_secretkey (merchant_id, mode, kind, name, scopes, key_hash, prefix,
                                 created_at, expires_at, revoked_at)
SELECT i, 'test', 'secret', '', '{}',
       encode(sha256(convert_to('sk_test_bench_' || i || '_' || :'salt', 'UTF8')), 'hex'),
       left('sk_test_bench_' || i, 12), now(), NULL, NULL
FROM generate_series(1, :list_id) AS i;

INSERT INTO wallets_wallet (id, merchant_id, mode, currency, status, available_balance,
                            reserved_balance, static_account_number, static_bank_name,
                            static_account_name, low_balance_threshold, low_balance_alerted,
                            created_at, updated_at)
SELECT i, i, 'test', 'NGN', 'active', :funded, 0, '2' || lpad(i::text, 9, '0'),
       'Sandbox Test Bank', 'Bench Merchant ' || i, NULL::bigint, false, now(), now()
FROM generate_series(1, :list_id) AS i
UNION ALL
SELECT 100000 + i, i, 'live', 'NGN', 'active', 0, 0, '3' || lpad(i::text, 9, '0'),
       'Wema Bank', 'Bench Merchant ' || i, NULL::bigint, false, now(), now()
FROM generate_series(1, :list_id) AS i;

-- Funding: one ledger entry (id = wallet id) and its funding transfer per test wallet.
INSERT INTO wallets_ledgerentry (id, wallet_id, entry_type, amount, fee_amount, available_delta,
                                 reserved_delta, available_balance_after, reserved_balance_after,
                                 reference, payout_id, description, created_at)
SELECT i, i, 'funding', :funded, 0, :funded, 0, :funded, 0, 'BENCH-FUND-' || i, NULL,
       'benchmark funding', now() - interval '3 years'
FROM generate_series(1, :list_id) AS i;

INSERT INTO wallets_fundingtransfer (provider_reference, wallet_id, mode, ledger_entry_id, amount,
                                     currency, source, receiving_account_number,
                                     sender_account_name, sender_account_number,
                                     sender_bank_name, narration, raw_payload, created_at)
SELECT 'BENCH-FUND-' || i, i, 'test', i, :funded, 'NGN', 'provider', '2' || lpad(i::text, 9, '0'),
       '', '', '', 'benchmark funding', '{}'::jsonb, now() - interval '3 years'
FROM generate_series(1, :list_id) AS i;

-- The list wallet's payouts: i = 0 .. n-1, payout id i + 1, oldest first.
INSERT INTO payouts_payout (id, merchant_id, wallet_id, mode, internal_reference, idempotency_key,
                            request_fingerprint, account_number, account_name, bank_code,
                            bank_name, bank_id, currency, amount, fee_amount, total_debit_amount,
                            status, narration, error_message, provider_name, provider_reference,
                            nip_session_id, returned_at, return_reason,
                            provider_responses, dispatch_attempts, dispatch_claimed_at,
                            verify_before_send, dispatched_at, ambiguous_since, next_requery_at,
                            requery_count, created_at, completed_at, updated_at,
                            fraud_nip_code, approval_status)
SELECT i + 1, :list_id, :list_id, 'test',
       'po_seed_' || lpad(to_hex(i), 20, '0'), 'seed-' || i,
       md5('seed-' || i) || md5('fingerprint-' || i),
       lpad((1100000000 + i % 1000)::text, 10, '0'), 'SEEDED BENEFICIARY ' || (i % 1000),
       bank.bank_code, bank.name, bank.id, 'NGN', :amount, :fee, :total,
       CASE WHEN i % 5 = 0 THEN 'failed' ELSE 'successful' END,
       'seeded payout ' || i,
       CASE WHEN i % 5 = 0 THEN 'Transfer reversed by the beneficiary bank (sandbox)' END,
       'sandbox', 'TRF_seed_' || i, '', NULL::timestamptz, '', '[]'::jsonb, 1, ts.created_at, false,
       ts.created_at + interval '1 second', NULL, NULL, 0,
       ts.created_at, ts.created_at + interval '2 seconds', ts.created_at + interval '2 seconds',
       '', 'not_required'
FROM generate_series(0, :n_payouts - 1) AS i
CROSS JOIN LATERAL (SELECT now() - interval '1 minute' * (:n_payouts - i) AS created_at) AS ts
CROSS JOIN (SELECT id, bank_code, name FROM wallets_bank WHERE bank_code = '058') AS bank;

-- Their ledger entries: reserve (id list_id + 1 + 2i) then debit or reversal (list_id + 2 + 2i).
-- Before payout i, s = i - ceil(i / 5) earlier payouts were captured.
INSERT INTO wallets_ledgerentry (id, wallet_id, entry_type, amount, fee_amount, available_delta,
                                 reserved_delta, available_balance_after, reserved_balance_after,
                                 reference, payout_id, description, created_at)
SELECT :list_id + 1 + 2 * i + step, :list_id,
       CASE WHEN step = 0 THEN 'payout_reserve'
            WHEN i % 5 = 0 THEN 'payout_reversal' ELSE 'payout_debit' END,
       CASE WHEN step = 1 AND i % 5 <> 0 THEN :amount ELSE :total END,
       CASE WHEN step = 1 AND i % 5 <> 0 THEN :fee ELSE 0 END,
       CASE WHEN step = 0 THEN -:total WHEN i % 5 = 0 THEN :total ELSE 0 END,
       CASE WHEN step = 0 THEN :total ELSE -:total END,
       :funded - :total * (i - (i + 4) / 5)
           - CASE WHEN step = 1 AND i % 5 = 0 THEN 0 ELSE :total END,
       CASE WHEN step = 0 THEN :total ELSE 0 END,
       'po_seed_' || lpad(to_hex(i), 20, '0'), i + 1, '',
       now() - interval '1 minute' * (:n_payouts - i) + interval '1 second' * step
FROM generate_series(0, :n_payouts - 1) AS i
CROSS JOIN (VALUES (0), (1)) AS steps(step);

UPDATE wallets_wallet
SET available_balance = :funded - :total * (:n_payouts - (:n_payouts + 4) / 5)
WHERE id = :list_id;

SELECT setval(pg_get_serial_sequence('merchants_merchant', 'id'), :list_id);
SELECT setval(pg_get_serial_sequence('wallets_wallet', 'id'), 100000 + :list_id);
SELECT setval(pg_get_serial_sequence('wallets_ledgerentry', 'id'),
              (SELECT max(id) FROM wallets_ledgerentry));
SELECT setval(pg_get_serial_sequence('payouts_payout', 'id'), greatest(:n_payouts, 1));
COMMIT;
VACUUM (ANALYZE) merchants_merchant, merchants_secretkey, wallets_wallet, wallets_ledgerentry,
                 wallets_fundingtransfer, payouts_payout;
