// The wire shapes of a guard check (docs/api.md "Guards"): what the gateway or agent asks before a
// call, and what the console answers. Pure: route handlers, the OpenAPI document, callers.
import { z } from 'zod';
import type { ApprovalRequestBody } from '../approvals/schemas';
import {
  argsDigestSchema,
  boundedString,
  guardCategories,
  outcomeSchema,
  retryValues,
  toolSchema,
} from '../outcomes/schemas';

const text = (max: number) => boundedString(max).min(1);

/** The caller's records not posted yet, ingested before deciding: a bounded number, so a check stays one short round trip. */
export const MAX_CHECK_RECORDS = 100;

export const guardCheckSchema = z
  .object({
    // The refusal's record, if the call is refused: a repeated check with it answers the same refusal.
    eventId: text(128),
    requestRef: text(200),
    organization: text(200),
    principal: text(200),
    agent: text(200).nullish(),
    server: text(200),
    tool: toolSchema,
    argsDigest: argsDigestSchema,
    idempotencyKey: text(255).nullish(),
    summary: boundedString(500).nullish(),
    records: z.array(outcomeSchema).max(MAX_CHECK_RECORDS).nullish(),
  })
  .strict();
export type GuardCheck = z.infer<typeof guardCheckSchema>;

/**
 * The guards asked in the same request as a write is staged (`guard` on `POST /api/v1/approvals`):
 * what the staging body does not already say of the call. Not part of what the request's
 * Idempotency-Key covers: the records sent along change between retries.
 */
export const stagingGuardSchema = z
  .object({
    eventId: text(128),
    idempotencyKey: text(255).nullish(),
    records: z.array(outcomeSchema).max(MAX_CHECK_RECORDS).nullish(),
  })
  .strict()
  .meta({
    description:
      "Ask the guards first, in this request (docs/api.md \"Guards\"): the refusal's event id, the operation's idempotency key, the caller's records not posted yet that bear on this call. Needs the scope outcomes:write.",
  });
export type StagingGuard = z.infer<typeof stagingGuardSchema>;

const recordId = z.uuid();
const sentence = z.string().meta({ description: 'One sentence for the agent: what was not done, and what to do.' });

export const guardRefusalSchema = z.strictObject({
  decision: z.literal('refuse'),
  category: z.enum(guardCategories),
  retry: z.enum(retryValues),
  recordId: recordId.optional().meta({ description: 'The earlier record the refusal points to.' }),
  retryAfterMs: z.number().int().min(0).optional().meta({ description: 'retry_too_soon: how long to wait.' }),
  text: sentence,
  record: z
    .strictObject({ id: z.uuid(), eventId: z.string() })
    .meta({ description: 'The refusal, stored as an outcome record (never_sent, its category).' }),
});

export const guardAnswerSchema = z
  .discriminatedUnion('decision', [
    z.strictObject({ decision: z.literal('allow') }),
    z.strictObject({
      decision: z.literal('hold'),
      recordId: recordId.meta({ description: 'The permission refusal earlier in the request.' }),
      text: sentence,
    }),
    guardRefusalSchema,
  ])
  .meta({ description: 'Whether the call may go to its server.' });
export type GuardAnswer = z.infer<typeof guardAnswerSchema>;

/** The guards' question about a write being staged: the staging body says most of it, `guard` the rest. */
export const guardCheckOf = (
  body: Pick<
    ApprovalRequestBody,
    'requestRef' | 'organization' | 'principal' | 'agent' | 'server' | 'tool' | 'argsDigest' | 'summary'
  >,
  guard: StagingGuard,
): GuardCheck => ({
  eventId: guard.eventId,
  requestRef: body.requestRef,
  organization: body.organization,
  principal: body.principal,
  agent: body.agent,
  server: body.server,
  tool: { name: body.tool.name, annotations: body.tool.annotations },
  argsDigest: body.argsDigest,
  idempotencyKey: guard.idempotencyKey,
  summary: body.summary,
  records: guard.records,
});
