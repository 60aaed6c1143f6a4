import { apiRoute, json } from '@/lib/server/http/api-route';
import { listApprovals, requestApproval } from '@/lib/server/approvals';
import { approvalListQuerySchema, approvalRequestSchema } from '@/lib/approvals/schemas';

export const POST = apiRoute(
  { action: 'approvals.request', body: approvalRequestSchema },
  async ({ actor, body, request }) => {
    const result = await requestApproval(actor, request.headers.get('idempotency-key'), body);
    if (!result.ok) return result;
    // A replay answers exactly as the first time, and says so.
    const response = json(result.value.approval, 201);
    if (result.value.replayed) response.headers.set('idempotent-replayed', 'true');
    return response;
  },
);

export const GET = apiRoute({ action: 'approvals.read', query: approvalListQuerySchema }, ({ actor, query }) =>
  listApprovals(actor, query),
);
