import { apiRoute } from '@/lib/server/http/api-route';
import { getOutcome } from '@/lib/server/outcomes';

export const GET = apiRoute<undefined, { id: string }>({ action: 'outcomes.read' }, ({ actor, params }) =>
  getOutcome(actor, params.id),
);
