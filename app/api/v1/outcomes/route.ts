import { apiRoute } from '@/lib/server/http/api-route';
import { ingestOutcomes, listOutcomes } from '@/lib/server/outcomes';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import { outcomeQuerySchema } from '@/lib/outcomes/query';

export const POST = apiRoute({ action: 'outcomes.write', body: outcomeBatchSchema }, ({ actor, body }) =>
  ingestOutcomes(actor, body),
);

export const GET = apiRoute({ action: 'outcomes.read', query: outcomeQuerySchema }, ({ actor, query }) =>
  listOutcomes(actor, query),
);
