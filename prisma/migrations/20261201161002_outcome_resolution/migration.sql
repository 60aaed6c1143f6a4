-- CreateEnum
CREATE TYPE "outcome_resolved_by" AS ENUM ('record', 'state_check');

-- CreateEnum
CREATE TYPE "state_verdict" AS ENUM ('happened', 'did_not_happen');

-- AlterTable
ALTER TABLE "outcome_records" ADD COLUMN     "resolution_by" "outcome_resolved_by",
ADD COLUMN     "resolution_verdict" "state_verdict",
ADD COLUMN     "resolved_at" TIMESTAMPTZ(3),
ADD COLUMN     "resolved_by_record_id" UUID;

-- CreateTable
CREATE TABLE "outcome_state_checks" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "record_id" UUID NOT NULL,
    "organization" TEXT NOT NULL,
    "verdict" "state_verdict" NOT NULL,
    "note" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "who" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outcome_state_checks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reclassify_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "classifier_version" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "last_id" UUID,
    "examined" INTEGER NOT NULL DEFAULT 0,
    "changed" INTEGER NOT NULL DEFAULT 0,
    "changes" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "reclassify_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "outcome_state_checks_record_id_key" ON "outcome_state_checks"("record_id");

-- CreateIndex
CREATE UNIQUE INDEX "reclassify_runs_classifier_version_key" ON "reclassify_runs"("classifier_version");

-- CreateIndex
CREATE INDEX "outcome_records_organization_idempotency_key_args_digest_idx" ON "outcome_records"("organization", "idempotency_key", "args_digest");

-- A resolution is whole or absent; by record names the record; only an unknown is resolved.
ALTER TABLE "outcome_records" ADD CONSTRAINT "outcome_records_resolution_whole" CHECK (
  (resolved_at IS NULL AND resolution_by IS NULL AND resolution_verdict IS NULL AND resolved_by_record_id IS NULL)
  OR (resolved_at IS NOT NULL AND resolution_by IS NOT NULL AND resolution_verdict IS NOT NULL
      AND (resolution_by <> 'record' OR resolved_by_record_id IS NOT NULL))
);
ALTER TABLE "outcome_state_checks" ADD CONSTRAINT "outcome_state_checks_note" CHECK (char_length(note) BETWEEN 1 AND 500);
