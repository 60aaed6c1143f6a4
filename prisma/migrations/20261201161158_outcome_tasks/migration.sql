-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "outcome_category" ADD VALUE 'task_running';
ALTER TYPE "outcome_category" ADD VALUE 'task_input_required';
ALTER TYPE "outcome_category" ADD VALUE 'task_cancelled';
ALTER TYPE "outcome_category" ADD VALUE 'task_expired';

-- AlterTable
ALTER TABLE "outcome_records" ADD COLUMN     "task_id" TEXT;

-- CreateIndex
CREATE INDEX "outcome_records_organization_task_id_idx" ON "outcome_records"("organization", "task_id");
