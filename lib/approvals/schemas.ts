// Wire shapes of approvals, decisions, revocations, redemptions and policy rules (docs/api.md,
// "Approvals and grants"). Pure: used by route handlers, server actions and forms alike.
import { z } from 'zod';
import { cursorCodec, cursorId, cursorInstant } from '@/lib/pagination/cursor';
import { argsDigestSchema, boundedString, storable, toolSchema } from '@/lib/outcomes/schemas';
import { catalogToolSchema } from '@/lib/catalog/schemas';
import { BUDGET_BOUNDS, type GuardBudgets } from '@/lib/guards/budgets';
import { stagingGuardSchema } from '@/lib/guards/schemas';

export const approvalStatuses = ['pending', 'approved', 'denied', 'expired', 'revoked', 'redeemed'] as const;
export type ApprovalStatus = (typeof approvalStatuses)[number];

export const decisionKinds = ['approve', 'deny'] as const;
export type DecisionKind = (typeof decisionKinds)[number];

export const TTL_MAX_SECONDS = 86_400;
export const PENDING_TTL_DEFAULT = 3600;
export const GRANT_TTL_DEFAULT = 900;
export const REASON_MAX = 1000;
/** A tool's description as its server declared it (MCP tools/list), as far as a request carries it. */
export const TOOL_DESCRIPTION_MAX = 8192;

const NAME_MAX = 200;
const text = (max: number) => boundedString(max).min(1, 'is required');
const ttl = (fallback: number) => z.number().int().min(1).max(TTL_MAX_SECONDS).default(fallback);
// A reason is what people read later: surrounding blanks are not a reason.
const reason = storable(z.string().trim().min(1, 'is required').max(REASON_MAX));

// JSON producers often write null for "not there".
const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

// The tool as the stager knows it; the description only when its server declared one (a gateway).
const approvalToolSchema = toolSchema.extend({ description: optional(boundedString(TOOL_DESCRIPTION_MAX)) }).strict();

// The exact arguments the tool will be called with. Taken as parsed, not copied through a zod
// object (which drops a `__proto__` key and so would change what the digest covers): the data
// layer checks them (lib/approvals/arguments.ts checkArguments), masks them and seals them.
const toolArguments = z.unknown().meta({
  type: 'object',
  additionalProperties: true,
  description:
    'The object the tool will be called with: argsDigest must be its digest. At most 64 KiB as canonical JSON, 32 levels deep.',
  example: { order_id: '4411', amount: '40.00', currency: 'EUR' },
});

// `POST /api/v1/approvals`. Strict: a misspelt field must not be silently dropped from what a
// reviewer sees.
export const approvalRequestSchema = z
  .object({
    requestRef: text(NAME_MAX),
    organization: text(NAME_MAX),
    principal: text(NAME_MAX),
    agent: optional(text(NAME_MAX)),
    server: text(NAME_MAX),
    tool: approvalToolSchema,
    argsDigest: argsDigestSchema,
    // Required unless COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS=off: the data layer says so.
    arguments: optional(toolArguments),
    // The "why" a reviewer decides on; masked for secrets and personal data before storing.
    summary: text(500),
    resource: optional(z.object({ type: text(100), id: text(NAME_MAX) }).strict()),
    pendingTtlSeconds: ttl(PENDING_TTL_DEFAULT),
    grantTtlSeconds: ttl(GRANT_TTL_DEFAULT),
    guard: optional(stagingGuardSchema),
  })
  .strict();
export type ApprovalRequestBody = z.infer<typeof approvalRequestSchema>;

// The `Idempotency-Key` header.
export const idempotencyKeySchema = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

// `POST /api/v1/approvals/{id}/decisions`: `version` is the one the reviewer saw.
export const decisionSchema = z
  .object({
    decision: z.enum(decisionKinds, 'must be approve or deny'),
    reason,
    // A number, or its decimal digits as the console's form sends them; never `true` or `[2]`.
    version: z
      .union(
        [
          z.number(),
          z
            .string()
            .regex(/^\d{1,10}$/)
            .transform(Number),
        ],
        'must be a number',
      )
      .pipe(z.number().int().min(1).max(2_147_483_647)),
  })
  .strict();
export type DecisionBody = z.infer<typeof decisionSchema>;

// `POST /api/v1/approvals/{id}/revoke`
export const revokeSchema = z.object({ reason }).strict();
export type RevokeBody = z.infer<typeof revokeSchema>;

// `POST /api/v1/grants/{grantId}/redeem`: what the execution step is about to run.
export const redeemSchema = z
  .object({
    server: text(NAME_MAX),
    tool: text(NAME_MAX),
    argsDigest: argsDigestSchema,
  })
  .strict();
export type RedeemBody = z.infer<typeof redeemSchema>;

export const SHOW_FIELDS_MAX = 10;
export const SHOW_FIELD_MAX_CHARS = 100;
// The argument fields a tool's queue row shows (docs/design.md "What a reviewer sees: what will
// run"), written `a,b` (dotted paths reach into objects) on the command line and in the form; blank
// clears them. One message for the whole list, so a form can show it under its one field.
const showFieldsSchema = z.string().transform((text, ctx) => {
  const fields = text.trim() === '' ? [] : text.split(',').map((f) => f.trim());
  const problem = fields.some((f) => f === '')
    ? 'must not have an empty entry (as in a,,b): separate field names with single commas'
    : fields.length > SHOW_FIELDS_MAX
      ? `must name at most ${SHOW_FIELDS_MAX} fields`
      : fields.some((f) => [...f].length > SHOW_FIELD_MAX_CHARS)
        ? `must name fields of at most ${SHOW_FIELD_MAX_CHARS} characters each`
        : fields.some((f) => /[\u0000-\u001f\u007f]/.test(f))
          ? 'must not contain control characters'
          : new Set(fields).size < fields.length
            ? 'names a field twice'
            : null;
  if (!problem) return fields;
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
});

/** Why a budget was refused; the CLI prefixes its option, the form its label. */
export const budgetMessage = (key: keyof GuardBudgets) =>
  `must be a whole number from ${BUDGET_BOUNDS[key].min} to ${BUDGET_BOUNDS[key].max} (empty: inherit)`;

// One of the guards' budgets on a rule (lib/guards/budgets.ts): a whole number within its bounds,
// as a number or as typed (the command line, a form). Blank or null clears it: the rule inherits
// it again. Typed text must be digits alone, so "1e3", "0x10" or "1.0" are refused rather than
// read as numbers.
const budgetSchema = (key: keyof GuardBudgets) => {
  const { min, max } = BUDGET_BOUNDS[key];
  const message = budgetMessage(key);
  return z
    .union([z.string(), z.number(), z.null()], message)
    .transform((v, ctx) => {
      if (v === null || (typeof v === 'string' && v.trim() === '')) return null;
      const n = typeof v === 'number' ? v : /^\s*\d{1,10}\s*$/.test(v) ? Number(v) : NaN;
      if (Number.isSafeInteger(n) && n >= min && n <= max) return n;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    })
    .optional();
};

// An admin's rule; `tool` null (or blank in a form) means every tool of the server. `show`
// absent leaves the fields shown as they are; an empty list clears them. The same for each
// budget: absent leaves it, null (or blank) clears it back to inherited.
export const policyRuleSchema = z.object({
  show: showFieldsSchema.optional(),
  failedAttempts: budgetSchema('failedAttempts'),
  calls: budgetSchema('calls'),
  backoffBaseMs: budgetSchema('backoffBaseMs'),
  server: storable(z.string().trim().min(1, 'is required').max(NAME_MAX)),
  tool: z
    .string()
    .trim()
    .max(NAME_MAX)
    .regex(/^[^\u0000*]*$/, 'must not contain * or NUL characters (leave it empty for the whole server)')
    .nullish()
    .transform((t) => (t ? t : null)),
  // 0, 1 or 2 approvals, or `blocked`: the tool is not exposed at all (seed 001).
  requiredApprovals: z.union(
    [
      z.literal('blocked'),
      z.coerce
        .number('must be 0, 1, 2 or blocked')
        .int('must be 0, 1, 2 or blocked')
        .min(0, 'must be 0, 1, 2 or blocked')
        .max(2, 'must be 0, 1, 2 or blocked'),
    ],
    'must be 0, 1, 2 or blocked',
  ),
});
export type PolicyRuleInput = z.output<typeof policyRuleSchema>;

export const policyRuleIdSchema = z.object({ id: z.uuid() });

// ── The list query (`GET /api/v1/approvals`, the console's queue) ─────────────────────────────

export const approvalListStatuses = [...approvalStatuses, 'live'] as const;

/**
 * The reviewer's queues over pending requests: `needs_my_decision` holds what the caller may decide
 * now (not on their own principal, not decided by them); `waiting_on_others` the rest.
 */
export const approvalQueues = ['needs_my_decision', 'waiting_on_others'] as const;
export type ApprovalQueue = (typeof approvalQueues)[number];
export type ApprovalListStatus = (typeof approvalListStatuses)[number];

export const APPROVAL_PAGE_DEFAULT = 50;
export const APPROVAL_PAGE_MAX = 200;

/**
 * Where the previous page stopped. `expires` pages run soonest-to-expire first (the pending
 * queue); `created` pages newest first.
 */
export type ApprovalCursor = { order: 'expires' | 'created'; at: Date; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Opaque to callers (lib/pagination/cursor.ts), so the ordering can change without breaking them.
const approvalCursor = cursorCodec(
  z
    .tuple([z.enum(['expires', 'created']), cursorInstant, cursorId])
    .transform(([order, at, id]): ApprovalCursor => ({ order, at, id })),
  (c) => [c.order, c.at.toISOString(), c.id],
);
export const encodeApprovalCursor = approvalCursor.encode;
export const decodeApprovalCursor = approvalCursor.decode;

// An empty parameter (a form's blank field) means "no filter".
const param = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
const name = boundedString(NAME_MAX);

export const approvalListQuerySchema = z.strictObject({
  // pending: waiting and not yet expired; live: pending, or approved with a grant still usable.
  status: param(z.enum(approvalListStatuses)),
  // Pending requests only, split by who must act; combined with any other status it matches nothing.
  queue: param(z.enum(approvalQueues)),
  server: param(name),
  tool: param(name),
  principal: param(name),
  organization: param(name),
  requestRef: param(name),
  cursor: param(approvalCursor.param(300)),
  limit: param(z.coerce.number().int().min(1).max(APPROVAL_PAGE_MAX)),
});
export type ApprovalListQuery = z.output<typeof approvalListQuerySchema>;

export const isUuid = (s: string) => UUID.test(s);

// `POST /api/v1/policy/evaluate`: what policy requires of each of a server's tools, each as
// `tools/list` gave it (lib/catalog/schemas.ts: a tool sent with its inputSchema is pinned, docs/catalog.md).
// Names are unique: two answers for one name could only disagree in the caller's reading.
export const POLICY_EVALUATE_MAX_TOOLS = 1000;
/** The body may be this large: a thousand full definitions do not fit in the usual 1 MiB. */
export const POLICY_EVALUATE_MAX_BYTES = 8 * 1024 * 1024;
export const policyEvaluateSchema = z
  .object({
    server: text(NAME_MAX),
    tools: z
      .array(catalogToolSchema)
      .min(1, 'must name at least one tool')
      .max(POLICY_EVALUATE_MAX_TOOLS, `must name at most ${POLICY_EVALUATE_MAX_TOOLS} tools`)
      .superRefine((tools, ctx) => {
        const seen = new Set<string>();
        tools.forEach((t, i) => {
          if (seen.has(t.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'is listed twice' });
          seen.add(t.name);
        });
      }),
  })
  .strict();
export type PolicyEvaluateBody = z.infer<typeof policyEvaluateSchema>;
