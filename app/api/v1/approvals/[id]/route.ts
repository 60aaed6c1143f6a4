import { apiRoute } from '@/lib/server/http/api-route';
import { getApproval } from '@/lib/server/data/approvals';

export const GET = apiRoute<undefined, { id: string }>(
  { scopes: ['approvals:request', 'grants:redeem'], action: 'approvals.read' },
  ({ client, params }) => getApproval(client, params.id),
);
