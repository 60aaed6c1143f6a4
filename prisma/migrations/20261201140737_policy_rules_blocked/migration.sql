-- AlterTable
ALTER TABLE "policy_rules" ADD COLUMN     "blocked" BOOLEAN NOT NULL DEFAULT false;

-- A blocked rule reads as the strictest number to anything that reads only the number.
ALTER TABLE "policy_rules"
  ADD CONSTRAINT "policy_rules_blocked_strictest_check" CHECK (NOT "blocked" OR "required_approvals" = 2);
