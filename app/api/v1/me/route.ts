import { apiRoute } from '@/lib/server/http/api-route';
import { describeClient } from '@/lib/server/credentials/credentials';
import { ok } from '@/lib/result';

// Who am I: lets an integrator check a credential before wiring it in.
export const GET = apiRoute({ action: 'identity.read' }, async ({ actor }) => ok(describeClient(actor)));
