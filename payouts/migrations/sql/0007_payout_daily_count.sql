
LOCK TABLE payouts_payout IN SHARE ROW EXCLUSIVE MODE;

CREATE OR REPLACE FUNCTION payouts_payout_count_insert() RETURNS trigger AS $$
BEGIN
    INSERT INTO payouts_payoutcountchange (wallet_id, status, day, delta)
    SELECT n.wallet_id, n.status, ((n.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date, count(*) FROM new_rows n GROUP BY 1, 2, 3;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION payouts_payout_count_update() RETURNS trigger AS $$
BEGIN
    INSERT INTO payouts_payoutcountchange (wallet_id, status, day, delta)
    SELECT wallet_id, status, day, sum(delta)
    FROM (
        SELECT n.wallet_id, n.status, ((n.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date AS day, 1 AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.status <> o.status OR n.wallet_id <> o.wallet_id
           OR n.created_at <> o.created_at
        UNION ALL
        SELECT o.wallet_id, o.status, ((o.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date AS day, -1 AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.status <> o.status OR n.wallet_id <> o.wallet_id
           OR n.created_at <> o.created_at
    ) AS changes
    GROUP BY 1, 2, 3 HAVING sum(delta) <> 0;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION payouts_payout_count_delete() RETURNS trigger AS $$
BEGIN
    INSERT INTO payouts_payoutcountchange (wallet_id, status, day, delta)
    SELECT o.wallet_id, o.status, ((o.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date, -count(*) FROM old_rows o GROUP BY 1, 2, 3;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION payouts_payout_count_truncate() RETURNS trigger AS $$
BEGIN
    DELETE FROM payouts_payoutcountchange;
    DELETE FROM payouts_payoutdailycount;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER payouts_payout_count_insert AFTER INSERT ON payouts_payout
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_insert();
CREATE TRIGGER payouts_payout_count_update AFTER UPDATE ON payouts_payout
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_update();
CREATE TRIGGER payouts_payout_count_delete AFTER DELETE ON payouts_payout
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_delete();
CREATE TRIGGER payouts_payout_count_truncate AFTER TRUNCATE ON payouts_payout
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_truncate();

DELETE FROM payouts_payoutcountchange;
DELETE FROM payouts_payoutdailycount;
INSERT INTO payouts_payoutdailycount (wallet_id, status, day, count)
SELECT n.wallet_id, n.status, ((n.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date, count(*)
FROM payouts_payout n GROUP BY 1, 2, 3;
