import { apiRoute } from '@/lib/server/http/api-route';
import { countPendingApprovals } from '@/lib/server/data/approvals';
import { fail, ok } from '@/lib/result';

// For the console's live badge: how many requests wait for a decision now.
export const GET = apiRoute({ action: 'approvals.read' }, async ({ client }) =>
  client.kind === 'user' ? ok({ pending: await countPendingApprovals(client.viewer) }) : fail('forbidden'),
);
