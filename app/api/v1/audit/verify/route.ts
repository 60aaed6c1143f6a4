import { apiRoute } from '@/lib/server/api-route';
import { verifyAuditChainAs } from '@/lib/server/audit';

export const GET = apiRoute({ action: 'audit.read' }, async ({ client }) => verifyAuditChainAs(client));
