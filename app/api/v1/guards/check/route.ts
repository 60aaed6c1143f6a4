import { apiRoute } from '@/lib/server/http/api-route';
import { checkGuard } from '@/lib/server/guards';
import { guardCheckSchema } from '@/lib/guards/schemas';

export const POST = apiRoute({ action: 'outcomes.write', body: guardCheckSchema }, ({ actor, body }) =>
  checkGuard(actor, body),
);
