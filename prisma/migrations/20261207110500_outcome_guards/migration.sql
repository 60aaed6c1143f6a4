-- AlterEnum
-- The guards' refusals (docs/design.md "Guards at the point of execution"), recorded as client blocks.
ALTER TYPE "outcome_category" ADD VALUE 'outcome_unknown';
ALTER TYPE "outcome_category" ADD VALUE 'already_done';
ALTER TYPE "outcome_category" ADD VALUE 'idempotency_key_reused';
ALTER TYPE "outcome_category" ADD VALUE 'not_retryable';
ALTER TYPE "outcome_category" ADD VALUE 'retry_too_soon';
ALTER TYPE "outcome_category" ADD VALUE 'budget_exhausted';

-- AlterTable
ALTER TABLE "outcome_records" ADD COLUMN     "earlier_record_id" UUID;

-- CreateIndex
CREATE INDEX "outcome_records_principal_server_tool_name_args_digest_rece_idx" ON "outcome_records"("principal", "server", "tool_name", "args_digest", "received_at" DESC);
