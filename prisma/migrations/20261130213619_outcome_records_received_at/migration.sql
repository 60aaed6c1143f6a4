-- For retention (lib/server/data/retention.ts): the oldest receipts first, a batch at a time.
-- Plain CREATE INDEX (migrations run in a transaction): it holds back writes to
-- outcome_records while it builds, a few seconds per million rows.
-- CreateIndex
CREATE INDEX "outcome_records_received_at_idx" ON "outcome_records"("received_at");
