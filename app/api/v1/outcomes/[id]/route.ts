import { apiRoute } from '@/lib/server/api-route';
import { getOutcome } from '@/lib/server/outcomes';

export const GET = apiRoute<undefined, { id: string }>(
  { scopes: ['outcomes:read'], action: 'outcomes.read' },
  ({ client, params }) => getOutcome(client, params.id),
);
