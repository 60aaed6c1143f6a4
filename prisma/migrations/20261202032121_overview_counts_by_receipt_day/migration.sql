-- outcome_counts_forget (migration 20261201232642_overview_counts) deletes the receipt days of a
-- partition the purge takes out: through this index, not by reading every row of the counts
-- (which follow hours × groups of everything stored). outcome_tool_counts has had its own since
-- 20261202024325_tool_counts.

-- CreateIndex
CREATE INDEX "outcome_counts_received_day_idx" ON "outcome_counts"("received_day");
