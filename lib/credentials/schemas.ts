import { z } from 'zod';
import { apiScopes } from './scopes';

const name = z.string().trim().min(1, 'is required').max(100);

export const createApiKeySchema = z.object({
  name,
  scopes: z
    .array(z.enum(apiScopes))
    .min(1, 'choose at least one scope')
    .max(apiScopes.length)
    .refine((s) => new Set(s).size === s.length, 'lists a scope twice'),
  organization: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[\w.-]+$/, 'letters, digits, . _ - only')
    .optional(),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeySchema>;

export const createPersonalTokenSchema = z.object({ name });
export const revokeCredentialSchema = z.object({ id: z.uuid() });
