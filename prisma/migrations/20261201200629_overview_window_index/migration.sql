-- The overview's counts over the last 7 days (lib/server/data/sql/stats.ts) group by delivery,
-- category, read-only and "unresolved" (resolved_at IS NULL): the (occurred_at, id) index, with
-- those columns after its key, answers them from the window's index entries alone. Before, with
-- resolved_at in no index, the grouping read the whole table (a parallel scan of every
-- partition: ~250 ms at 1M records). The delivery index goes back to (delivery, occurred_at):
-- only the list's delivery filter uses it now. One index wider, one narrower: about the same
-- work per inserted record.

-- DropIndex
DROP INDEX "outcome_records_delivery_occurred_at_category_read_only_idx";

-- DropIndex
DROP INDEX "outcome_records_occurred_at_id_idx";

-- CreateIndex
CREATE INDEX "outcome_records_occurred_at_id_delivery_category_read_only__idx" ON "outcome_records"("occurred_at" DESC, "id" DESC, "delivery", "category", "read_only", "resolved_at");

-- CreateIndex
CREATE INDEX "outcome_records_delivery_occurred_at_idx" ON "outcome_records"("delivery", "occurred_at" DESC);
