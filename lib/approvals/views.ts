// The JSON answers of the approvals and grants API (docs/api.md, "Approvals and grants") as they go
// over the wire (./view.ts is the shape in memory, with Dates). Documented by
// GET /api/v1/openapi.json and checked against every answer of the API e2e suite. Pure.
import { z } from 'zod';
import { toolAnnotationsSchema } from '@/lib/outcomes/schemas';
import { wireInstant } from '@/lib/outcomes/views';
import { approvalStatuses, decisionKinds } from './schemas';
import { BACKOFF_MAX_MS, BUDGET_BOUNDS, DEFAULT_BUDGETS } from '@/lib/guards/budgets';

const grantStates = ['active', 'redeemed', 'revoked', 'expired'] as const;

export const approvalCreatedSchema = z
  .strictObject({
    id: z.uuid(),
    status: z.enum(['pending', 'approved']),
    requiredApprovals: z.number().int().min(0),
    expiresAt: wireInstant,
    version: z.number().int(),
    grant: z
      .strictObject({ id: z.uuid(), expiresAt: wireInstant })
      .nullable()
      .meta({ description: 'Only when policy required no approval: the grant issued at once.' }),
  })
  .meta({ example: { id: '0b9f…', status: 'pending', requiredApprovals: 1, expiresAt: '…', version: 1, grant: null } });

export const approvalViewSchema = z
  .strictObject({
    id: z.uuid(),
    status: z.enum(approvalStatuses).meta({ description: 'A pending request past expiresAt reads expired.' }),
    requiredApprovals: z.number().int().min(0),
    decisions: z.array(
      z.strictObject({ reviewer: z.string(), decision: z.enum(decisionKinds), reason: z.string(), at: wireInstant }),
    ),
    version: z.number().int(),
    expiresAt: wireInstant,
    grant: z
      .strictObject({
        id: z.uuid(),
        issuedAt: wireInstant,
        expiresAt: wireInstant,
        redeemedAt: wireInstant.nullable(),
        revokedAt: wireInstant.nullable(),
        state: z.enum(grantStates),
      })
      .nullable(),
    requestRef: z.string(),
    idempotencyKey: z.string(),
    organization: z.string(),
    principal: z.string(),
    agent: z.string().nullable(),
    server: z.string(),
    tool: z.strictObject({
      name: z.string(),
      annotations: toolAnnotationsSchema.nullable(),
      description: z.string().nullable().meta({ description: 'As the tool’s server declared it (masked).' }),
    }),
    annotationsTrusted: z.boolean(),
    argsDigest: z.string(),
    argumentsSent: z.boolean().meta({ description: 'Whether the agent sent the tool’s arguments.' }),
    arguments: z.record(z.string(), z.unknown()).nullable().meta({
      description:
        'The arguments the grant is bound to, masked: for reviewers and admins while the request is open, in GET /approvals/{id} only. Otherwise null, and argumentsNote says why.',
    }),
    argumentsNote: z
      .string()
      .nullable()
      .meta({ example: 'erased when denied at 2026-12-01T10:00:00.000Z', description: 'Why arguments is null.' }),
    argumentsPreview: z
      .array(z.strictObject({ key: z.string(), value: z.string(), type: z.string() }))
      .nullable()
      .meta({
        description: 'The queue row’s fields: those an admin named for the tool, else the first three scalars.',
      }),
    summary: z.string(),
    resource: z.strictObject({ type: z.string(), id: z.string() }).nullable(),
    grantTtlSeconds: z.number().int(),
    createdAt: wireInstant,
    decidedAt: wireInstant.nullable(),
    revoked: z.strictObject({ at: wireInstant, by: z.string(), reason: z.string() }).nullable(),
  })
  .meta({ description: 'An approval request, its decisions and its grant.' });

export const approvalPageSchema = z.strictObject({
  items: z.array(approvalViewSchema),
  nextCursor: z.string().nullable(),
});

export const pendingCountSchema = z.strictObject({ pending: z.number().int().min(0) });

export const redemptionSchema = z
  .strictObject({
    grantId: z.uuid(),
    approvalId: z.uuid(),
    redeemedAt: wireInstant,
    server: z.string(),
    tool: z.string(),
    argsDigest: z.string(),
  })
  .meta({ description: 'The grant, redeemed: this answer comes exactly once per grant.' });

const budget = (key: keyof typeof BUDGET_BOUNDS) =>
  z.number().int().min(BUDGET_BOUNDS[key].min).max(BUDGET_BOUNDS[key].max);

export const policyEvaluationSchema = z
  .strictObject({
    server: z.string(),
    trusted: z.boolean().meta({ description: 'Whether the console believes this server’s annotations.' }),
    tools: z.array(
      z.strictObject({
        name: z.string(),
        readOnly: z.boolean(),
        blocked: z.boolean().meta({ description: 'Exposing the tool is refused: hide it, refuse every call.' }),
        held: z.boolean().meta({
          description:
            'The definition sent differs from the accepted one (or is new on a server that holds new tools): hide the tool and refuse its calls (tool_changed) until an admin accepts it.',
        }),
        requiredApprovals: z.union([z.literal(0), z.literal(1), z.literal(2)]),
        reason: z.string(),
        budgets: z
          .strictObject({
            failedAttempts: budget('failedAttempts').meta({
              description: `Failed attempts of this tool in one request reference; the next one is refused (budget_exhausted). Default ${DEFAULT_BUDGETS.failedAttempts}.`,
            }),
            calls: budget('calls').meta({
              description: `Calls in one request reference; the next one is refused (budget_exhausted). Default ${DEFAULT_BUDGETS.calls}.`,
            }),
            backoffBaseMs: budget('backoffBaseMs').meta({
              description: `The wait after a first failure before a retry (retry_too_soon sooner); it doubles with each further failure, up to ${BACKOFF_MAX_MS} ms. Default ${DEFAULT_BUDGETS.backoffBaseMs}.`,
            }),
          })
          .meta({
            description:
              'The guards’ budgets for this tool, resolved: its rule’s, else its server’s, else the defaults. A gateway counts trusted reads against them itself.',
          }),
      }),
    ),
  })
  .meta({ description: 'What the console’s policy requires of each tool, in the order asked.' });
