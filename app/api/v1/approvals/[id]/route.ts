import { apiRoute } from '@/lib/server/http/api-route';
import { getApproval } from '@/lib/server/approvals';

export const GET = apiRoute<undefined, { id: string }>({ action: 'approvals.read' }, ({ actor, params }) =>
  getApproval(actor, params.id),
);
