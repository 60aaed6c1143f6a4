import { apiRoute } from '@/lib/server/http/api-route';
import { redeemGrant } from '@/lib/server/data/grants';
import { redeemSchema } from '@/lib/approvals/schemas';

export const POST = apiRoute<typeof redeemSchema, { grantId: string }>(
  { scopes: ['grants:redeem'], body: redeemSchema },
  ({ client, body, params }) => redeemGrant(client, params.grantId, body),
);
