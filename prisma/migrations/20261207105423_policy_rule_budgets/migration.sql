-- A policy rule may set the guards' budgets for its server or tool (docs/design.md "Guards at the
-- point of execution"): failed attempts of one tool and calls in one request reference, and the
-- base of the bounded backoff. NULL inherits (the tool's rule, then the server's, then the defaults).

-- AlterTable
ALTER TABLE "policy_rules" ADD COLUMN     "backoff_base_ms" INTEGER,
ADD COLUMN     "call_budget" INTEGER,
ADD COLUMN     "failed_attempts_budget" INTEGER;

-- The bounds of lib/guards/budgets.ts BUDGET_BOUNDS, so no writer can store a budget the guards
-- would misread (zero calls, a backoff longer than its own ceiling).
ALTER TABLE "policy_rules"
  ADD CONSTRAINT "policy_rules_failed_attempts_budget_check"
    CHECK ("failed_attempts_budget" IS NULL OR "failed_attempts_budget" BETWEEN 1 AND 1000),
  ADD CONSTRAINT "policy_rules_call_budget_check"
    CHECK ("call_budget" IS NULL OR "call_budget" BETWEEN 1 AND 100000),
  ADD CONSTRAINT "policy_rules_backoff_base_ms_check"
    CHECK ("backoff_base_ms" IS NULL OR "backoff_base_ms" BETWEEN 100 AND 60000);
