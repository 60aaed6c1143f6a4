-- CreateEnum
CREATE TYPE "webhook_format" AS ENUM ('slack', 'standard');

-- CreateEnum
CREATE TYPE "webhook_delivery_status" AS ENUM ('pending', 'delivered', 'dead');

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "url" TEXT NOT NULL,
    "format" "webhook_format" NOT NULL,
    "events" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "secret_box" TEXT,
    "source" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "type" TEXT NOT NULL,
    "approval_id" UUID NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "event_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "status" "webhook_delivery_status" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),
    "lease_until" TIMESTAMPTZ(3),
    "lease_token" UUID,
    "last_error" TEXT,
    "last_status" INTEGER,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_endpoints_source_key" ON "webhook_endpoints"("source");

-- CreateIndex
CREATE INDEX "webhook_events_created_at_idx" ON "webhook_events"("created_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_idx" ON "webhook_deliveries"("endpoint_id", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_event_id_endpoint_id_key" ON "webhook_deliveries"("event_id", "endpoint_id");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand (what Prisma cannot express) ------------------------------------------------

-- The outbox write: one event for an approval's change, with what a message may name (no
-- arguments, no free text), and one delivery per enabled endpoint subscribed to its type. Called
-- inside the transaction of the change, after it, so the snapshot is the changed row.
CREATE FUNCTION webhook_enqueue(p_type text, p_approval uuid, p_extra jsonb DEFAULT '{}'::jsonb)
RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  v_event uuid;
BEGIN
  INSERT INTO webhook_events (type, approval_id, data)
  SELECT p_type, r.id, jsonb_build_object(
      'approvalId', r.id, 'requestRef', r.request_ref, 'organization', r.organization, 'principal', r.principal,
      'server', r.server, 'tool', r.tool_name, 'annotationsTrusted', r.annotations_trusted, 'status', r.status,
      'requiredApprovals', r.required_approvals, 'expiresAt', r.expires_at) || coalesce(p_extra, '{}'::jsonb)
  FROM approval_requests r WHERE r.id = p_approval
  RETURNING id INTO v_event;
  IF v_event IS NULL THEN
    RAISE EXCEPTION 'webhook_enqueue: no approval request %', p_approval USING ERRCODE = 'foreign_key_violation';
  END IF;
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT v_event, e.id FROM webhook_endpoints e WHERE e.enabled AND p_type = ANY (e.events);
  RETURN v_event;
END $$;

-- A grant redeemed (redeem_grants, one statement): its event is written by the same statement,
-- so redeem_grants itself is unchanged. It fires before that statement moves the request to
-- redeemed, hence the status given.
CREATE FUNCTION webhook_grant_redeemed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_enqueue('grant.redeemed', NEW.approval_id,
    jsonb_build_object('status', 'redeemed', 'redeemedAt', NEW.redeemed_at));
  RETURN NULL;
END $$;

CREATE TRIGGER grants_webhook_redeemed AFTER UPDATE OF redeemed_at ON grants
FOR EACH ROW WHEN (OLD.redeemed_at IS NULL AND NEW.redeemed_at IS NOT NULL)
EXECUTE FUNCTION webhook_grant_redeemed();

-- Events come only from webhook_enqueue; they are never rewritten.
CREATE FUNCTION webhook_events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'webhook events are not updated' USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER webhook_events_no_update BEFORE UPDATE ON webhook_events
FOR EACH ROW EXECUTE FUNCTION webhook_events_immutable();

ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_attempts_check CHECK (attempts >= 0);
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_url_check CHECK (url ~ '^https?://');
