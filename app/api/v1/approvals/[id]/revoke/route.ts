import { apiRoute } from '@/lib/server/http/api-route';
import { revokeApproval } from '@/lib/server/data/approvals';
import { revokeSchema } from '@/lib/approvals/schemas';
import { fail } from '@/lib/result';

export const POST = apiRoute<typeof revokeSchema, { id: string }>(
  { action: 'approval.revoke', body: revokeSchema },
  async ({ client, body, params }) =>
    client.kind === 'user' ? revokeApproval(client.viewer, { ...body, id: params.id }) : fail('forbidden'),
);
