import { json } from '@/lib/server/http/api-route';
import { openApiDocument } from '@/lib/openapi/document';

// Public (docs/api.md, "The API described"): no credential, so not through apiRoute, which always asks
// for one; answered with the same JSON headers as every other route.
export const GET = async (): Promise<Response> => json(openApiDocument());
