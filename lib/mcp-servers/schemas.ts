import { z } from 'zod';

export const serverNameSchema = z
  .string()
  .trim()
  .min(1, 'is required')
  .max(200)
  .regex(/^[\w.:@/-]+$/, 'letters, digits and . _ - : @ / only');
// Strict, as every API body: a misspelt or unexpected field is named, not silently dropped.
export const trustServerSchema = z.strictObject({ name: serverNameSchema });

// The answer of POST /api/v1/servers/trust: the server as now trusted.
export const trustedServerViewSchema = z.strictObject({
  name: z.string(),
  trustedBy: z.string(),
  trustedAt: z.iso.datetime(),
});
