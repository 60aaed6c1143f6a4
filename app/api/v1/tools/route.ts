import { apiRoute } from '@/lib/server/http/api-route';
import { listTools } from '@/lib/server/catalog/catalog';
import { toolsQuerySchema } from '@/lib/catalog/schemas';

// A server's tool catalog (docs/api.md "The tool catalog"): accepted and held definitions, and their lint.
export const GET = apiRoute({ action: 'outcomes.read', query: toolsQuerySchema }, ({ actor, query }) =>
  listTools(actor, query.server),
);
