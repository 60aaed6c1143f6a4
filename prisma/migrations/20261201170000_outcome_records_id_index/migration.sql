-- Lookups of one record by id (the record page, the API, resolution, state checks): the primary
-- key of the partitioned table starts with the organization, so a reader of every organization
-- would otherwise scan each partition.
-- CreateIndex
CREATE INDEX "outcome_records_id_idx" ON "outcome_records"("id");
