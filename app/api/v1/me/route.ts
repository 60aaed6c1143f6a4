import { apiRoute } from '@/lib/server/http/api-route';
import { describeClient } from '@/lib/server/data/credentials';
import { apiScopes } from '@/lib/credentials/scopes';
import { ok } from '@/lib/result';

// Who am I: lets an integrator check a credential before wiring it in.
export const GET = apiRoute({ scopes: [...apiScopes], action: 'console.view' }, async ({ client }) =>
  ok(describeClient(client)),
);
