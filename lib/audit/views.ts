// The JSON answer of GET /api/v1/audit/verify (docs/api.md, "Audit"). Pure.
import { z } from 'zod';

const head = z.string().meta({ description: 'The hash of the last entry that verifies.', example: 'sha256:…' });

export const auditVerificationSchema = z.union([
  z.strictObject({ ok: z.literal(true), entries: z.number().int().min(0), head }),
  z.strictObject({
    ok: z.literal(false),
    entries: z.number().int().min(0),
    firstBrokenEntry: z.number().int().min(1),
    reason: z.string(),
    head,
  }),
]);
