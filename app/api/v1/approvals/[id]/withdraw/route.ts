import { apiRoute } from '@/lib/server/http/api-route';
import { withdrawApproval } from '@/lib/server/approvals';
import { revokeSchema } from '@/lib/approvals/schemas';

// The staging key withdraws its own pending request: the same body as a revocation ({ reason }).
export const POST = apiRoute<typeof revokeSchema, { id: string }>(
  { action: 'approvals.request', body: revokeSchema },
  ({ actor, body, params }) => withdrawApproval(actor, { ...body, id: params.id }),
);
