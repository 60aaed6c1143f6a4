// The JSON answers of the outcome records API (docs/api.md, "Outcome records") as they go over the wire:
// instants as RFC 3339 text. Documented by GET /api/v1/openapi.json and checked against every
// answer of the API e2e suite. Pure.
import { z } from 'zod';
import { classificationSchema, observedSchema, toolAnnotationsSchema } from './schemas';
import { stateVerdicts } from './resolution';

/** An instant as JSON carries a Date: `toISOString`'s text. */
export const wireInstant = z.iso.datetime().meta({ example: '2026-11-30T12:00:00.000Z' });

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const ingestedRecordSchema = z.strictObject({
  eventId: z.string(),
  id: z.uuid(),
  classification: classificationSchema,
});

export const ingestResponseSchema = z
  .strictObject({
    accepted: z.number().int().min(0),
    duplicates: z.number().int().min(0),
    records: z.array(ingestedRecordSchema),
  })
  .meta({ description: 'What was stored: new records are accepted, re-sent ones duplicates; both listed.' });

export const resolutionSchema = z
  .strictObject({
    by: z.enum(['record', 'state_check']),
    verdict: z.enum(stateVerdicts),
    recordId: z.uuid().optional().meta({ description: 'The later record that settled it (by = record).' }),
    at: wireInstant,
    who: z.string().optional().meta({ description: 'Who checked, or the agent of the settling record.' }),
    note: z.string().optional().meta({ description: "The state check's note, masked." }),
  })
  .meta({ description: 'What settled this unknown (docs/design.md "Resolving an unknown").' });

export const outcomeViewSchema = z
  .strictObject({
    id: z.uuid(),
    eventId: z.string(),
    occurredAt: wireInstant,
    durationMs: nullable(z.number().int()),
    requestRef: z.string(),
    idempotencyKey: nullable(z.string()),
    attempt: nullable(z.number().int()),
    organization: z.string(),
    principal: z.string(),
    agent: nullable(z.string()),
    server: z.string(),
    serverVersion: nullable(z.string()),
    protocolVersion: nullable(z.string()),
    tool: z.strictObject({ name: z.string(), annotations: nullable(toolAnnotationsSchema) }),
    mcpRequestId: nullable(z.union([z.string(), z.number()])),
    grantId: nullable(z.string()),
    argsDigest: nullable(z.string()),
    summary: nullable(z.string()).meta({ description: 'Masked for secrets and personal data.' }),
    observed: observedSchema,
    classification: classificationSchema,
    annotationsTrusted: z.boolean(),
    receivedAt: wireInstant,
    classifierVersion: z
      .number()
      .int()
      .min(1)
      .meta({ description: 'The classifier version that derived `classification`.' }),
    resolution: resolutionSchema.nullable().meta({ description: 'null unless an unknown that something settled.' }),
    earlierRecordId: z
      .uuid()
      .nullable()
      .meta({ description: "A guard's refusal: the earlier record it points to (the unknown, refusal or failure)." }),
  })
  .meta({ description: 'A stored record: what the caller sent (free text masked), its classification and id.' });

export const outcomePageSchema = z
  .strictObject({
    items: z.array(outcomeViewSchema),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ description: 'Newest first.' });
