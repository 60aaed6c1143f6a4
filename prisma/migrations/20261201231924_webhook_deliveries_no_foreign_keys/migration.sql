-- DropForeignKey
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_endpoint_id_fkey";

-- DropForeignKey
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_fkey";

-- Written by hand (what Prisma cannot express) ------------------------------------------------

-- The foreign keys above made every delivery written at enqueue time check its event and its
-- endpoint, each check a KEY SHARE lock on the row (a tuple write and a WAL record; concurrent
-- decisions share the endpoint's lock through a multixact): most of what the outbox added to a
-- decision (bench:webhooks). The deliveries' cascades are done here instead, on the delete side.
--
-- An endpoint deleted while an event is being enqueued: the enqueue takes this lock shared before
-- it reads the endpoints, the delete takes it exclusively before it deletes their deliveries, and
-- each reads in a statement of its own (a snapshot taken after the lock; READ COMMITTED). So a
-- delete waits for the enqueues under way to commit and then sees their deliveries, and an enqueue
-- that comes after the delete waits for it and then no longer sees the endpoint. Shared, the lock
-- never makes two enqueues wait for each other. The key is 'webhooks' in ASCII. It is taken where
-- the foreign key's lock on the endpoint row was, so the order of locks is the one there was:
-- a delete holds it, then takes the audit lock (deleteWebhookEndpoint audits after deleting), as
-- it held the endpoint row before; a redemption takes it, then the audit lock; a decision, a
-- request, a revocation, an expiry take the audit lock first. One of these and a delete of an
-- endpoint at the same moment can deadlock, as they could with the foreign key (PostgreSQL ends
-- one of the two, after deadlock_timeout).

CREATE OR REPLACE FUNCTION webhook_enqueue(p_type text, p_approval uuid, p_extra jsonb DEFAULT '{}'::jsonb)
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
  PERFORM pg_advisory_xact_lock_shared(x'776562686f6f6b73'::bigint);
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT v_event, e.id FROM webhook_endpoints e WHERE e.enabled AND p_type = ANY (e.events);
  RETURN v_event;
END $$;

CREATE FUNCTION webhook_endpoints_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(x'776562686f6f6b73'::bigint);
  DELETE FROM webhook_deliveries d USING gone g WHERE d.endpoint_id = g.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_endpoints_cascade AFTER DELETE ON webhook_endpoints
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_endpoints_deleted();

-- An event's deliveries are written in its transaction: no delivery of a deleted event can come.
CREATE FUNCTION webhook_events_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_deliveries d USING gone g WHERE d.event_id = g.id;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_events_cascade AFTER DELETE ON webhook_events
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_deleted();
