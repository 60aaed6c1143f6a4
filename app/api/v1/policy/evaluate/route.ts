import { apiRoute } from '@/lib/server/http/api-route';
import { evaluatePolicy } from '@/lib/server/policy/policy-rules';
import { POLICY_EVALUATE_MAX_BYTES, policyEvaluateSchema } from '@/lib/approvals/schemas';

// What the console's policy requires of each tool (docs/api.md): for gateways and agents deciding which
// calls need a grant and which tools not to show. Pins the definitions sent (docs/catalog.md "Pinning").
export const POST = apiRoute(
  { action: 'policy.evaluate', body: policyEvaluateSchema, maxBodyBytes: POLICY_EVALUATE_MAX_BYTES },
  ({ actor, body }) => evaluatePolicy(actor, body),
);
