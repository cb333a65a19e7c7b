
DROP TRIGGER IF EXISTS payouts_payout_count_insert ON payouts_payout;
DROP TRIGGER IF EXISTS payouts_payout_count_update ON payouts_payout;
DROP TRIGGER IF EXISTS payouts_payout_count_delete ON payouts_payout;
DROP TRIGGER IF EXISTS payouts_payout_count_truncate ON payouts_payout;
DROP FUNCTION IF EXISTS payouts_payout_count_insert();
DROP FUNCTION IF EXISTS payouts_payout_count_update();
DROP FUNCTION IF EXISTS payouts_payout_count_delete();
DROP FUNCTION IF EXISTS payouts_payout_count_truncate();
