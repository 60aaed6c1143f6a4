import { apiRoute } from '@/lib/server/http/api-route';
import { countPendingApprovals } from '@/lib/server/approvals';
import { ok } from '@/lib/result';

// For the console's live badge (people only): how many requests wait for a decision now.
export const GET = apiRoute({ action: 'console.view' }, async ({ actor }) =>
  ok({ pending: await countPendingApprovals(actor) }),
);
