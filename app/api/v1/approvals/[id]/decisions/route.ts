import { apiRoute } from '@/lib/server/http/api-route';
import { decideApproval } from '@/lib/server/approvals';
import { decisionSchema } from '@/lib/approvals/schemas';

// People only (personal token or console session): a decision is a person's.
export const POST = apiRoute<typeof decisionSchema, { id: string }>(
  { action: 'approval.decide', body: decisionSchema },
  ({ actor, body, params }) => decideApproval(actor, { ...body, id: params.id }),
);
