import { apiRoute } from '@/lib/server/http/api-route';
import { verifyAuditChainAs } from '@/lib/server/audit/audit';

export const GET = apiRoute({ action: 'audit.read' }, async ({ actor }) => verifyAuditChainAs(actor));
