import { apiRoute } from '@/lib/server/api-route';
import { trustServer } from '@/lib/server/servers';
import { trustServerSchema } from '@/lib/servers/schemas';
import { fail } from '@/lib/result';

export const POST = apiRoute({ action: 'servers.manage', body: trustServerSchema }, async ({ client, body }) =>
  client.kind === 'user' ? trustServer(client.viewer, body.name) : fail('forbidden'),
);
