import { apiRoute } from '@/lib/server/http/api-route';
import { ingestOutcomes, listOutcomes } from '@/lib/server/data/outcomes';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import { outcomeQuerySchema } from '@/lib/outcomes/query';

export const POST = apiRoute({ scopes: ['outcomes:write'], body: outcomeBatchSchema }, ({ client, body }) =>
  ingestOutcomes(client, body),
);

export const GET = apiRoute(
  { scopes: ['outcomes:read'], action: 'outcomes.read', query: outcomeQuerySchema },
  ({ client, query }) => listOutcomes(client, query),
);
