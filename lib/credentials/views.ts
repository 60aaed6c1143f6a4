// The JSON answer of GET /api/v1/me: who the credential is. Pure.
import { z } from 'zod';
import { roles } from '@/lib/auth/permissions';
import { apiScopes } from './scopes';

export const clientDescriptionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('api_key'),
    id: z.uuid(),
    name: z.string(),
    scopes: z.array(z.enum(apiScopes)),
    organization: z.string().nullable().meta({ description: 'The one organization the key is limited to, if any.' }),
  }),
  z.strictObject({
    kind: z.literal('user'),
    id: z.uuid(),
    email: z.string(),
    role: z.enum(roles),
    principalId: z.string(),
  }),
]);
