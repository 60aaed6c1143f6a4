-- DropIndex
DROP INDEX "outcome_records_delivery_occurred_at_idx";

-- CreateIndex
CREATE INDEX "outcome_records_delivery_occurred_at_category_read_only_idx" ON "outcome_records"("delivery", "occurred_at" DESC, "category", "read_only");
