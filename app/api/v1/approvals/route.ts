import { apiRoute, json } from '@/lib/server/http/api-route';
import { listApprovals, requestApproval } from '@/lib/server/data/approvals';
import { approvalListQuerySchema, approvalRequestSchema } from '@/lib/approvals/schemas';

export const POST = apiRoute(
  { scopes: ['approvals:request'], body: approvalRequestSchema },
  async ({ client, body, request }) => {
    const result = await requestApproval(client, request.headers.get('idempotency-key'), body);
    if (!result.ok) return result;
    // A replay answers exactly as the first time, and says so.
    const response = json(result.value.approval, 201);
    if (result.value.replayed) response.headers.set('idempotent-replayed', 'true');
    return response;
  },
);

export const GET = apiRoute(
  { scopes: ['approvals:request', 'grants:redeem'], action: 'approvals.read', query: approvalListQuerySchema },
  ({ client, query }) => listApprovals(client, query),
);
