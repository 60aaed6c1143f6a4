import { apiRoute } from '@/lib/server/http/api-route';
import { redeemGrant } from '@/lib/server/approvals/grants';
import { redeemSchema } from '@/lib/approvals/schemas';

export const POST = apiRoute<typeof redeemSchema, { grantId: string }>(
  { action: 'grants.redeem', body: redeemSchema },
  ({ actor, body, params }) => redeemGrant(actor, params.grantId, body),
);
