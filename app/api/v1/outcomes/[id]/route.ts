import { apiRoute } from '@/lib/server/http/api-route';
import { getOutcome } from '@/lib/server/data/outcomes';

export const GET = apiRoute<undefined, { id: string }>(
  { scopes: ['outcomes:read'], action: 'outcomes.read' },
  ({ client, params }) => getOutcome(client, params.id),
);
