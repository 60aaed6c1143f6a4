import { apiRoute } from '@/lib/server/http/api-route';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';

export const POST = apiRoute({ action: 'servers.manage', body: trustServerSchema }, ({ actor, body }) =>
  trustServer(actor, body.name),
);
