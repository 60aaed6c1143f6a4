import { apiRoute } from '@/lib/server/http/api-route';
import { decideApproval } from '@/lib/server/data/approvals';
import { decisionSchema } from '@/lib/approvals/schemas';
import { fail } from '@/lib/result';

// People only (personal token or console session): a decision is a person's.
export const POST = apiRoute<typeof decisionSchema, { id: string }>(
  { action: 'approval.decide', body: decisionSchema },
  async ({ client, body, params }) =>
    client.kind === 'user' ? decideApproval(client.viewer, { ...body, id: params.id }) : fail('forbidden'),
);
