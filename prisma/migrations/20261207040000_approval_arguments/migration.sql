-- An approval request carries the tool's arguments, masked and sealed, while someone may decide on
-- it (docs/design.md "What a reviewer sees: what will run"), and the tool's description as its
-- server declared it; a policy rule names the argument fields the queue shows for its tool.

-- AlterTable
ALTER TABLE "approval_requests" ADD COLUMN     "arguments_sealed" TEXT,
ADD COLUMN     "arguments_sent" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "tool_description" TEXT;

-- AlterTable
ALTER TABLE "policy_rules" ADD COLUMN     "show_fields" TEXT[];

-- No terminal request keeps its arguments, and only a request that was sent arguments has any.
ALTER TABLE "approval_requests"
  ADD CONSTRAINT "approval_requests_arguments_erased_check"
    CHECK ("arguments_sealed" IS NULL OR "status" IN ('pending', 'approved')),
  ADD CONSTRAINT "approval_requests_arguments_sent_check" CHECK ("arguments_sealed" IS NULL OR "arguments_sent");

-- What a request is about now includes whether it was sent arguments and the tool's description;
-- its sealed arguments may only ever be erased, never replaced.
CREATE OR REPLACE FUNCTION approval_requests_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
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
      NEW.request_hash, NEW.created_at, NEW.arguments_sent, NEW.tool_description)
     IS DISTINCT FROM
     (OLD.id, OLD.request_ref, OLD.organization, OLD.principal, OLD.agent, OLD.server, OLD.tool_name,
      OLD.tool_annotations, OLD.annotations_trusted, OLD.args_digest, OLD.summary, OLD.resource_type, OLD.resource_id,
      OLD.required_approvals, OLD.expires_at, OLD.grant_ttl_seconds, OLD.requested_by_key_id, OLD.idempotency_key,
      OLD.request_hash, OLD.created_at, OLD.arguments_sent, OLD.tool_description) THEN
    RAISE EXCEPTION 'what an approval request is about never changes' USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.arguments_sealed IS NOT NULL AND NEW.arguments_sealed IS DISTINCT FROM OLD.arguments_sealed THEN
    RAISE EXCEPTION 'the arguments of an approval request are only ever erased' USING ERRCODE = 'check_violation';
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

-- Erases a request's arguments in the very statement that makes it terminal, whichever code path
-- (a denial, the expiry sweep, a revocation, redeem_grants) wrote it.
CREATE OR REPLACE FUNCTION approval_requests_erase_arguments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.arguments_sealed := NULL;
  RETURN NEW;
END $$;

-- Only when the new status is terminal and something is left to erase.
CREATE TRIGGER approval_requests_erase_arguments BEFORE UPDATE ON approval_requests
  FOR EACH ROW WHEN (NEW.status IN ('denied', 'expired', 'revoked', 'redeemed') AND NEW.arguments_sealed IS NOT NULL)
  EXECUTE FUNCTION approval_requests_erase_arguments();
