import { apiRoute, json } from '@/lib/server/http/api-route';
import { listApprovals, stageWrite } from '@/lib/server/approvals';
import { approvalListQuerySchema, approvalRequestSchema } from '@/lib/approvals/schemas';

export const POST = apiRoute(
  { action: 'approvals.request', body: approvalRequestSchema },
  async ({ actor, body, request }) => {
    const result = await stageWrite(actor, request.headers.get('idempotency-key'), body);
    if (!result.ok) return result;
    // The guards refused the write (docs/api.md "Guards"): nothing was staged.
    if ('refused' in result.value) return json({ guard: result.value.refused }, 200);
    // A replay answers exactly as the first time, and says so.
    const response = json(result.value.approval, 201);
    if (result.value.replayed) response.headers.set('idempotent-replayed', 'true');
    return response;
  },
);

export const GET = apiRoute({ action: 'approvals.read', query: approvalListQuerySchema }, ({ actor, query }) =>
  listApprovals(actor, query),
);
