import { apiRoute } from '@/lib/server/http/api-route';
import { revokeApproval } from '@/lib/server/approvals';
import { revokeSchema } from '@/lib/approvals/schemas';

export const POST = apiRoute<typeof revokeSchema, { id: string }>(
  { action: 'approval.revoke', body: revokeSchema },
  ({ actor, body, params }) => revokeApproval(actor, { ...body, id: params.id }),
);
