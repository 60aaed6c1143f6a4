-- AlterTable
ALTER TABLE "webhook_events" ALTER COLUMN "approval_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "tool_definitions" (
    "server" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "accepted_hash" TEXT,
    "accepted" JSONB,
    "accepted_at" TIMESTAMPTZ(3),
    "accepted_by" TEXT,
    "held_hash" TEXT,
    "held" JSONB,
    "held_since" TIMESTAMPTZ(3),

    CONSTRAINT "tool_definitions_pkey" PRIMARY KEY ("server","tool_name")
);

-- CreateTable
CREATE TABLE "catalog_servers" (
    "name" TEXT NOT NULL,
    "hold_new_tools" BOOLEAN NOT NULL DEFAULT false,
    "changed_by" TEXT NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "catalog_servers_pkey" PRIMARY KEY ("name")
);

-- A row holds an accepted definition, a held one or both; each hash goes with its content; a held
-- definition is one that differs from the accepted one.
ALTER TABLE "tool_definitions"
  ADD CONSTRAINT "tool_definitions_some_check" CHECK ("accepted_hash" IS NOT NULL OR "held_hash" IS NOT NULL),
  ADD CONSTRAINT "tool_definitions_accepted_check"
    CHECK (("accepted_hash" IS NULL) = ("accepted" IS NULL) AND ("accepted_hash" IS NULL) = ("accepted_at" IS NULL)),
  ADD CONSTRAINT "tool_definitions_held_check"
    CHECK (("held_hash" IS NULL) = ("held" IS NULL) AND ("held_hash" IS NULL) = ("held_since" IS NULL)),
  ADD CONSTRAINT "tool_definitions_differs_check" CHECK ("held_hash" IS DISTINCT FROM "accepted_hash"),
  ADD CONSTRAINT "tool_definitions_hash_check"
    CHECK (("accepted_hash" IS NULL OR "accepted_hash" ~ '^sha256:[0-9a-f]{64}$')
       AND ("held_hash" IS NULL OR "held_hash" ~ '^sha256:[0-9a-f]{64}$'));

-- An event about something other than an approval request (tool.changed): no approval, its data as
-- given (identifiers only), one delivery per enabled endpoint subscribed to its type.
CREATE OR REPLACE FUNCTION webhook_enqueue_data(p_type text, p_data jsonb)
  RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  v_event uuid;
BEGIN
  INSERT INTO webhook_events (type, approval_id, data) VALUES (p_type, NULL, p_data) RETURNING id INTO v_event;
  PERFORM pg_advisory_xact_lock_shared(x'776562686f6f6b73'::bigint);
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT v_event, e.id FROM webhook_endpoints e WHERE e.enabled AND p_type = ANY (e.events);
  RETURN v_event;
END $$;
