// The wire shape of one outcome record (docs/api.md, "Outcome records") and of the classification
// the console derives from it. Pure: imported by route handlers, forms and the agent-side SDK.
import { z } from 'zod';

export const boundaries = ['client', 'admission', 'protocol', 'tool', 'none'] as const;
export type Boundary = (typeof boundaries)[number];

export const deliveries = ['never_sent', 'rejected', 'completed', 'unknown'] as const;
export type Delivery = (typeof deliveries)[number];

export const retryValues = [
  'no',
  'backoff',
  'after_correction',
  'after_reauth',
  'after_approval',
  'after_state_check',
  'after_input',
] as const;
export type Retry = (typeof retryValues)[number];

/** The guards' refusals (docs/design.md "Guards at the point of execution"), each recorded as a client block. */
export const guardCategories = [
  'outcome_unknown',
  'already_done',
  'idempotency_key_reused',
  'not_retryable',
  'retry_too_soon',
  'budget_exhausted',
] as const;

export const categories = [
  // client, never sent
  'approval_required',
  'denied_by_policy',
  'no_credentials',
  'not_sent',
  // client, never sent: refused by a guard (docs/design.md "Guards at the point of execution")
  ...guardCategories,
  // admission (HTTP)
  'unauthenticated',
  'forbidden',
  'session_expired',
  'rate_limited',
  'unavailable',
  'upstream_failure',
  // protocol (JSON-RPC)
  'protocol_error',
  'invalid_arguments',
  'unknown_tool',
  'internal',
  'input_required',
  // client, after sending
  'timeout',
  'connection_lost',
  'cancelled',
  'no_response',
  // tool results
  'validation',
  'denied',
  'not_found',
  'conflict',
  'tool_error',
  'output_schema_violation',
  'ok',
  // MCP tasks (classifier version 2)
  'task_running',
  'task_input_required',
  'task_cancelled',
  'task_expired',
] as const;
export type Category = (typeof categories)[number];

export type GuardCategory = (typeof guardCategories)[number];
export const isGuardCategory = (c: string): c is GuardCategory => (guardCategories as readonly string[]).includes(c);

export const clientBlocks = ['approval_required', 'denied_by_policy', 'no_credentials', ...guardCategories] as const;
export type ClientBlock = (typeof clientBlocks)[number];

export const clientErrors = ['timeout', 'connection_lost', 'cancelled'] as const;
export type ClientError = (typeof clientErrors)[number];

export const authErrors = ['invalid_token', 'insufficient_scope'] as const;
export type AuthError = (typeof authErrors)[number];

export const outputValidations = ['valid', 'invalid', 'not_declared', 'missing'] as const;
export type OutputValidation = (typeof outputValidations)[number];

/** 2026-07-28 servers say what kind of answer a call got; older ones say nothing (omit it). */
export const resultTypes = ['complete', 'input_required', 'task'] as const;
export type ResultType = (typeof resultTypes)[number];

/** An MCP task's statuses (2025-11-25 and the 2026-07-28 tasks extension). */
export const taskStatuses = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof taskStatuses)[number];
export const terminalTaskStatuses: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

// Every string has a ceiling so a record's size is bounded by its schema, not only by the
// 1 MiB body limit.
const NAME_MAX = 200;
// PostgreSQL refuses NUL in text and jsonb, and half a surrogate pair is not Unicode at all (jsonb
// refuses its escape; a text column would silently store U+FFFD instead): both refused here,
// naming the field, not as a 500 or a changed value later.
const NO_NUL = /^[^\u0000]*$/;
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Whether PostgreSQL can hold `v` as text: no NUL, no unpaired surrogate (what `storable` refuses). */
export const isStorableText = (v: string) => NO_NUL.test(v) && !UNPAIRED_SURROGATE.test(v);
/** `s` refusing what cannot be stored as text: NUL, and unpaired surrogates. */
export const storable = (s: z.ZodString) =>
  s
    .regex(NO_NUL, 'must not contain NUL characters')
    .refine((v) => !UNPAIRED_SURROGATE.test(v), 'must be valid Unicode (no unpaired surrogates)');
export const boundedString = (max: number) => storable(z.string().max(max));
const text = (max: number) => boundedString(max).min(1);
// Postgres `integer`: what a counter or a duration can be stored as.
const int4 = z.number().int().max(2_147_483_647);

// JSON producers often write null for "not there"; optional fields accept both.
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

// Not strict: gateways forward MCP's annotations object verbatim, and MCP may add hints.
// Unknown hints are dropped rather than refused.
export const toolAnnotationsSchema = z.object({
  title: optional(boundedString(NAME_MAX)),
  readOnlyHint: optional(z.boolean()),
  destructiveHint: optional(z.boolean()),
  idempotentHint: optional(z.boolean()),
  openWorldHint: optional(z.boolean()),
});
export type ToolAnnotations = z.infer<typeof toolAnnotationsSchema>;

export const toolSchema = z
  .object({
    name: text(NAME_MAX),
    annotations: optional(toolAnnotationsSchema),
  })
  .strict();

export const resultSchema = z
  .object({
    isError: z.boolean(),
    // Free-form on purpose: the classifier maps known spellings and ignores the rest.
    errorCategory: optional(boundedString(100)),
    // Absent means the caller did not check, which counts as `not_declared`.
    outputValidation: optional(z.enum(outputValidations)),
  })
  .strict();
export type ObservedResult = z.infer<typeof resultSchema>;

export const taskSchema = z
  .object({
    // A server's task id: an identifier, kept as sent (and linked across records by it).
    id: text(NAME_MAX),
    status: z.enum(taskStatuses),
    // True: the TTL passed or tasks/get no longer finds the task, and no terminal status was seen.
    expired: optional(z.boolean()),
  })
  .strict();
export type ObservedTask = z.infer<typeof taskSchema>;

/** Who asked in an interim round of a call: its server, or the gateway itself (an approval). */
export const roundAskers = ['server', 'gateway'] as const;
export type RoundAsker = (typeof roundAskers)[number];

/** What a round asked the client for; never what was asked or answered. */
export const roundKinds = ['elicitation_form', 'elicitation_url', 'sampling', 'roots', 'approval'] as const;
export type RoundKind = (typeof roundKinds)[number];

/** A call's interim rounds are recorded up to this many (the first ones). */
export const MAX_RECORDED_ROUNDS = 8;
/** The input requests of one round are counted up to this many. */
export const MAX_ROUND_REQUESTS = 1000;

export const roundSchema = z
  .object({
    // When the round's answer went to the client, from the call's first request.
    atMs: int4.min(0),
    by: z.enum(roundAskers),
    asked: z
      .array(z.enum(roundKinds))
      .max(roundKinds.length)
      .refine((kinds) => new Set(kinds).size === kinds.length, 'must not name a kind twice'),
    requests: z.number().int().min(0).max(MAX_ROUND_REQUESTS),
  })
  .strict();
export type ObservedRound = z.infer<typeof roundSchema>;

const observedShape = z
  .object({
    sent: z.boolean(),
    clientBlock: optional(z.enum(clientBlocks)),
    httpStatus: optional(z.number().int().min(100).max(599)),
    authError: optional(z.enum(authErrors)),
    jsonRpcErrorCode: optional(z.number().int()),
    clientError: optional(z.enum(clientErrors)),
    result: optional(resultSchema),
    resultType: optional(z.enum(resultTypes)),
    task: optional(taskSchema),
    // The interim rounds (`input_required`) of a call recorded once at its end, oldest first.
    rounds: optional(z.array(roundSchema).max(MAX_RECORDED_ROUNDS)),
  })
  .strict();

// Observations that cannot all be true are refused at the door, naming the field, rather
// than silently resolved by the classifier's precedence.
export const observedSchema = observedShape.superRefine((o, ctx) => {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (o.sent) {
    if (o.clientBlock != null) issue('clientBlock', 'only allowed when sent is false');
  } else {
    for (const field of ['httpStatus', 'authError', 'jsonRpcErrorCode', 'result', 'resultType', 'task'] as const) {
      if (o[field] != null) issue(field, 'must be absent when sent is false: nothing came back');
    }
  }
  if (o.authError != null && o.httpStatus != null && o.httpStatus !== 401 && o.httpStatus !== 403) {
    issue('authError', 'only allowed with httpStatus 401 or 403');
  }
  if (o.resultType === 'task' && o.task == null) issue('task', 'required when resultType is "task"');
  if (o.resultType === 'input_required' && o.result != null) {
    issue('result', 'must be absent when resultType is "input_required": the server asked for input instead');
  }
  if (o.task?.expired && terminalTaskStatuses.includes(o.task.status)) {
    issue('task', 'expired is only allowed while the last status seen is working or input_required');
  }
});
export type Observed = z.infer<typeof observedSchema>;

// RFC 3339 with an offset, within what both PostgreSQL and JavaScript dates hold exactly
// (year 0000 passes the format but PostgreSQL has no year 0). Shared with the list query.
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59);
export const instantSchema = z.iso
  .datetime({ offset: true })
  // NaN: the format check above has already said what is wrong.
  .refine((s) => !(Date.parse(s) < EARLIEST || Date.parse(s) > LATEST), 'must be between 1970 and 9999');

// An argument digest, never the arguments: the fixed shape makes smuggling them impossible.
export const argsDigestSchema = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, 'must be "sha256:" followed by 64 lowercase hex digits');

export const outcomeSchema = z
  .object({
    eventId: text(128),
    occurredAt: instantSchema,
    durationMs: optional(int4.min(0)),
    requestRef: text(200),
    idempotencyKey: optional(text(255)),
    attempt: optional(int4.min(1)),
    organization: text(NAME_MAX),
    principal: text(NAME_MAX),
    agent: optional(text(NAME_MAX)),
    server: text(NAME_MAX),
    serverVersion: optional(text(100)),
    protocolVersion: optional(text(64)),
    tool: toolSchema,
    mcpRequestId: optional(z.union([boundedString(NAME_MAX), z.number().int()])),
    // Stored only as a keyed hash, so its length costs nothing; some servers use JWT-sized ids.
    sessionId: optional(text(1024)),
    grantId: optional(text(NAME_MAX)),
    argsDigest: optional(argsDigestSchema),
    summary: optional(boundedString(500)),
    observed: observedSchema,
    // A guard's refusal: the earlier record it points to (the unknown, the refusal, the failure).
    earlierRecordId: optional(z.uuid()),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.earlierRecordId != null && !(r.observed.clientBlock && isGuardCategory(r.observed.clientBlock))) {
      ctx.addIssue({ code: 'custom', path: ['earlierRecordId'], message: "only allowed on a guard's refusal" });
    }
  });
export type Outcome = z.infer<typeof outcomeSchema>;

export const outcomeBatchSchema = z
  .object({
    records: z.array(outcomeSchema).min(1).max(1000),
  })
  .strict();
export type OutcomeBatch = z.infer<typeof outcomeBatchSchema>;

export const classificationSchema = z
  .object({
    boundary: z.enum(boundaries),
    delivery: z.enum(deliveries),
    category: z.enum(categories),
    retry: z.enum(retryValues),
    readOnly: z.boolean(),
    whatHappened: z.string().max(1000),
    nextStep: z.string().max(1000),
  })
  .strict();
export type Classification = z.infer<typeof classificationSchema>;
