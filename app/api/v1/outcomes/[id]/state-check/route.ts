import { apiRoute } from '@/lib/server/http/api-route';
import { recordStateCheck } from '@/lib/server/outcomes';
import { stateCheckBodySchema } from '@/lib/outcomes/resolution';

// People (personal token or session) and API keys with outcomes:write (docs/api.md).
export const POST = apiRoute<typeof stateCheckBodySchema, { id: string }>(
  { action: 'outcomes.state_check', body: stateCheckBodySchema },
  ({ actor, body, params }) => recordStateCheck(actor, params.id, body),
);
