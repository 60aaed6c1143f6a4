import { apiRoute } from '@/lib/server/http/api-route';
import { acceptHeld } from '@/lib/server/catalog/catalog';
import { acceptToolSchema } from '@/lib/catalog/schemas';

// An admin accepts the held definition of a tool, named by the hash they reviewed (docs/catalog.md "Pinning").
export const POST = apiRoute({ action: 'servers.manage', body: acceptToolSchema }, ({ actor, body }) =>
  acceptHeld(actor, body),
);
