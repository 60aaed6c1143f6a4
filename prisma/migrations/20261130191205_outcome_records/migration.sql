-- CreateEnum
CREATE TYPE "outcome_boundary" AS ENUM ('client', 'admission', 'protocol', 'tool', 'none');

-- CreateEnum
CREATE TYPE "outcome_delivery" AS ENUM ('never_sent', 'rejected', 'completed', 'unknown');

-- CreateEnum
CREATE TYPE "outcome_category" AS ENUM ('approval_required', 'denied_by_policy', 'no_credentials', 'not_sent', 'unauthenticated', 'forbidden', 'session_expired', 'rate_limited', 'unavailable', 'upstream_failure', 'protocol_error', 'invalid_arguments', 'unknown_tool', 'internal', 'input_required', 'timeout', 'connection_lost', 'cancelled', 'no_response', 'validation', 'denied', 'not_found', 'conflict', 'tool_error', 'output_schema_violation', 'ok');

-- CreateEnum
CREATE TYPE "outcome_retry" AS ENUM ('no', 'backoff', 'after_correction', 'after_reauth', 'after_approval', 'after_state_check', 'after_input');

-- CreateTable
CREATE TABLE "outcome_records" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "api_key_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER,
    "request_ref" TEXT NOT NULL,
    "idempotency_key" TEXT,
    "attempt" INTEGER,
    "organization" TEXT NOT NULL,
    "principal" TEXT NOT NULL,
    "agent" TEXT,
    "server" TEXT NOT NULL,
    "server_version" TEXT,
    "protocol_version" TEXT,
    "tool_name" TEXT NOT NULL,
    "tool_annotations" JSONB,
    "mcp_request_id" JSONB,
    "session_hash" TEXT,
    "grant_id" TEXT,
    "args_digest" TEXT,
    "summary" TEXT,
    "observed" JSONB NOT NULL,
    "boundary" "outcome_boundary" NOT NULL,
    "delivery" "outcome_delivery" NOT NULL,
    "category" "outcome_category" NOT NULL,
    "retry" "outcome_retry" NOT NULL,
    "read_only" BOOLEAN NOT NULL,
    "what_happened" TEXT NOT NULL,
    "next_step" TEXT NOT NULL,
    "classifier_version" INTEGER NOT NULL,
    "annotations_trusted" BOOLEAN NOT NULL,
    "content_hash" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "received_seq" BIGSERIAL NOT NULL,

    CONSTRAINT "outcome_records_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "outcome_records_occurred_at_id_idx" ON "outcome_records"("occurred_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "outcome_records_request_ref_occurred_at_idx" ON "outcome_records"("request_ref", "occurred_at");

-- CreateIndex
CREATE INDEX "outcome_records_delivery_occurred_at_idx" ON "outcome_records"("delivery", "occurred_at" DESC);

-- CreateIndex
CREATE INDEX "outcome_records_organization_occurred_at_idx" ON "outcome_records"("organization", "occurred_at" DESC);

-- CreateIndex
CREATE INDEX "outcome_records_idempotency_key_idx" ON "outcome_records"("idempotency_key");

-- CreateIndex
CREATE INDEX "outcome_records_grant_id_idx" ON "outcome_records"("grant_id");

-- CreateIndex
CREATE UNIQUE INDEX "outcome_records_api_key_id_event_id_key" ON "outcome_records"("api_key_id", "event_id");
