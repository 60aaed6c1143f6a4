import { apiRoute } from '@/lib/server/http/api-route';
import { trustServer } from '@/lib/server/data/trusted-servers';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';
import { fail } from '@/lib/result';

export const POST = apiRoute({ action: 'servers.manage', body: trustServerSchema }, async ({ client, body }) =>
  client.kind === 'user' ? trustServer(client.viewer, body.name) : fail('forbidden'),
);
