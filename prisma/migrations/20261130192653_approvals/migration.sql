-- CreateEnum
CREATE TYPE "approval_status" AS ENUM ('pending', 'approved', 'denied', 'expired', 'revoked', 'redeemed');

-- CreateEnum
CREATE TYPE "approval_decision_kind" AS ENUM ('approve', 'deny');

-- CreateTable
CREATE TABLE "approval_requests" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "request_ref" TEXT NOT NULL,
    "organization" TEXT NOT NULL,
    "principal" TEXT NOT NULL,
    "agent" TEXT,
    "server" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "tool_annotations" JSONB,
    "annotations_trusted" BOOLEAN NOT NULL,
    "args_digest" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "resource_type" TEXT,
    "resource_id" TEXT,
    "required_approvals" INTEGER NOT NULL,
    "status" "approval_status" NOT NULL DEFAULT 'pending',
    "version" INTEGER NOT NULL DEFAULT 1,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "grant_ttl_seconds" INTEGER NOT NULL,
    "requested_by_key_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_by" TEXT,
    "revoke_reason" TEXT,

    CONSTRAINT "approval_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approval_decisions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "approval_id" UUID NOT NULL,
    "reviewer_id" UUID NOT NULL,
    "reviewer_email" TEXT NOT NULL,
    "reviewer_principal" TEXT NOT NULL,
    "decision" "approval_decision_kind" NOT NULL,
    "reason" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "approval_decisions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "grants" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "approval_id" UUID NOT NULL,
    "server" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "args_digest" TEXT NOT NULL,
    "issued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "redeemed_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "redeemed_by_key_id" UUID,

    CONSTRAINT "grants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "policy_rules" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "server" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "required_approvals" INTEGER NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "policy_rules_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "approval_requests_status_expires_at_idx" ON "approval_requests"("status", "expires_at");

-- CreateIndex
CREATE INDEX "approval_requests_created_at_id_idx" ON "approval_requests"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "approval_requests_request_ref_idx" ON "approval_requests"("request_ref");

-- CreateIndex
CREATE INDEX "approval_requests_principal_idx" ON "approval_requests"("principal");

-- CreateIndex
CREATE UNIQUE INDEX "approval_requests_requested_by_key_id_idempotency_key_key" ON "approval_requests"("requested_by_key_id", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "approval_decisions_approval_id_reviewer_id_key" ON "approval_decisions"("approval_id", "reviewer_id");

-- CreateIndex
CREATE UNIQUE INDEX "grants_approval_id_key" ON "grants"("approval_id");

-- CreateIndex
CREATE UNIQUE INDEX "policy_rules_server_tool_name_key" ON "policy_rules"("server", "tool_name");

-- AddForeignKey
ALTER TABLE "approval_decisions" ADD CONSTRAINT "approval_decisions_approval_id_fkey" FOREIGN KEY ("approval_id") REFERENCES "approval_requests"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "grants" ADD CONSTRAINT "grants_approval_id_fkey" FOREIGN KEY ("approval_id") REFERENCES "approval_requests"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- ── Invariants the database keeps, whatever the application does (DESIGN.md, "Approval lifecycle").

ALTER TABLE "approval_requests"
  ADD CONSTRAINT "approval_requests_required_approvals_check" CHECK ("required_approvals" BETWEEN 0 AND 2),
  ADD CONSTRAINT "approval_requests_version_check" CHECK ("version" >= 1),
  ADD CONSTRAINT "approval_requests_grant_ttl_check" CHECK ("grant_ttl_seconds" BETWEEN 1 AND 86400);

ALTER TABLE "approval_decisions"
  ADD CONSTRAINT "approval_decisions_reason_check" CHECK (btrim("reason") <> '');

-- A grant is either redeemed or revoked, never both.
ALTER TABLE "grants"
  ADD CONSTRAINT "grants_redeemed_or_revoked_check" CHECK ("redeemed_at" IS NULL OR "revoked_at" IS NULL),
  ADD CONSTRAINT "grants_lifetime_check" CHECK ("expires_at" > "issued_at");

ALTER TABLE "policy_rules"
  ADD CONSTRAINT "policy_rules_required_approvals_check" CHECK ("required_approvals" BETWEEN 0 AND 2),
  ADD CONSTRAINT "policy_rules_tool_name_check" CHECK ("tool_name" <> '');

-- The lifecycle: pending → approved → redeemed, side exits denied, expired, revoked. What a
-- request is about never changes, approval needs its approvals, and nothing is deleted.
CREATE FUNCTION approval_requests_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'approval requests are never deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF TG_OP = 'INSERT' THEN
    -- Born pending, or approved at once only when policy requires no approval.
    IF NOT (NEW.status = 'pending' OR (NEW.status = 'approved' AND NEW.required_approvals = 0)) THEN
      RAISE EXCEPTION 'a new approval request is pending (or approved when it needs no approval)' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF (NEW.id, NEW.request_ref, NEW.organization, NEW.principal, NEW.agent, NEW.server, NEW.tool_name,
      NEW.tool_annotations, NEW.annotations_trusted, NEW.args_digest, NEW.summary, NEW.resource_type, NEW.resource_id,
      NEW.required_approvals, NEW.expires_at, NEW.grant_ttl_seconds, NEW.requested_by_key_id, NEW.idempotency_key,
      NEW.request_hash, NEW.created_at)
     IS DISTINCT FROM
     (OLD.id, OLD.request_ref, OLD.organization, OLD.principal, OLD.agent, OLD.server, OLD.tool_name,
      OLD.tool_annotations, OLD.annotations_trusted, OLD.args_digest, OLD.summary, OLD.resource_type, OLD.resource_id,
      OLD.required_approvals, OLD.expires_at, OLD.grant_ttl_seconds, OLD.requested_by_key_id, OLD.idempotency_key,
      OLD.request_hash, OLD.created_at) THEN
    RAISE EXCEPTION 'what an approval request is about never changes' USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.status <> OLD.status AND NOT (
       (OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'revoked'))
    OR (OLD.status = 'approved' AND NEW.status IN ('redeemed', 'revoked'))) THEN
    RAISE EXCEPTION 'an approval request cannot go from % to %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.status = 'approved' AND OLD.status = 'pending' AND
     (SELECT count(*) FROM approval_decisions d WHERE d.approval_id = NEW.id AND d.decision = 'approve') < NEW.required_approvals THEN
    RAISE EXCEPTION 'approval request % has fewer approvals than it requires', NEW.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER approval_requests_lifecycle BEFORE INSERT OR UPDATE OR DELETE ON approval_requests
  FOR EACH ROW EXECUTE FUNCTION approval_requests_lifecycle();

-- A decision only while the request is pending and unexpired (database clock), never by the
-- request's own principal (as recorded, and as the reviewer's user account says now), and
-- never changed or removed afterwards.
CREATE FUNCTION approval_decisions_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r approval_requests%ROWTYPE;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    RAISE EXCEPTION 'approval decisions are never changed or deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  SELECT * INTO r FROM approval_requests WHERE id = NEW.approval_id FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no approval request %', NEW.approval_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF NEW.reviewer_principal = r.principal
     OR EXISTS (SELECT 1 FROM users u WHERE u.id = NEW.reviewer_id AND u.principal_id = r.principal) THEN
    RAISE EXCEPTION 'the principal of approval request % cannot decide on it', r.id USING ERRCODE = 'check_violation';
  END IF;
  IF r.status <> 'pending' OR r.expires_at <= clock_timestamp() THEN
    RAISE EXCEPTION 'approval request % is not pending', r.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER approval_decisions_guard BEFORE INSERT OR UPDATE OR DELETE ON approval_decisions
  FOR EACH ROW EXECUTE FUNCTION approval_decisions_guard();

-- A grant exists only for an approved request and carries exactly its binding; it is redeemed
-- at most once, only before it expires (database clock) and never after revocation; a redeemed
-- or revoked grant never changes again, and no grant is deleted.
CREATE FUNCTION grants_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r approval_requests%ROWTYPE;
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'grants are never deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT * INTO r FROM approval_requests WHERE id = NEW.approval_id FOR SHARE;
    IF NOT FOUND OR r.status <> 'approved' THEN
      RAISE EXCEPTION 'a grant needs an approved request' USING ERRCODE = 'check_violation';
    END IF;
    IF (NEW.server, NEW.tool_name, NEW.args_digest) IS DISTINCT FROM (r.server, r.tool_name, r.args_digest) THEN
      RAISE EXCEPTION 'a grant carries exactly its request''s server, tool and argument digest' USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.redeemed_at IS NOT NULL OR NEW.revoked_at IS NOT NULL THEN
      RAISE EXCEPTION 'a grant starts unredeemed and unrevoked' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.redeemed_at IS NOT NULL THEN
    RAISE EXCEPTION 'grant % is already redeemed', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.revoked_at IS NOT NULL THEN
    RAISE EXCEPTION 'grant % is revoked', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF (NEW.id, NEW.approval_id, NEW.server, NEW.tool_name, NEW.args_digest, NEW.issued_at, NEW.expires_at)
     IS DISTINCT FROM (OLD.id, OLD.approval_id, OLD.server, OLD.tool_name, OLD.args_digest, OLD.issued_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'a grant''s binding and lifetime never change' USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.redeemed_at IS NOT NULL AND OLD.expires_at <= clock_timestamp() THEN
    RAISE EXCEPTION 'grant % has expired', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER grants_guard BEFORE INSERT OR UPDATE OR DELETE ON grants
  FOR EACH ROW EXECUTE FUNCTION grants_guard();
