// The JSON answer of GET /api/v1/incidents/{requestRef} (docs/api.md, "Incidents") as it goes over the
// wire. Documented by GET /api/v1/openapi.json and checked against the API e2e suite's answers. Pure.
import { z } from 'zod';
import { approvalStatuses, decisionKinds } from '@/lib/approvals/schemas';
import { classificationSchema, taskSchema } from '@/lib/outcomes/schemas';
import { wireInstant } from '@/lib/outcomes/views';
import { findingKinds } from './types';

const entry = <K extends string, T extends z.ZodRawShape>(kind: K, shape: T) =>
  z.strictObject({
    at: wireInstant,
    kind: z.literal(kind),
    title: z.string(),
    detail: z.string().nullable(),
    approvalId: z.string().nullable(),
    ...shape,
  });

export const timelineEntrySchema = z.discriminatedUnion('kind', [
  entry('outcome', {
    recordId: z.uuid(),
    idempotencyKey: z.string().nullable(),
    attempt: z.number().int().nullable(),
    grantId: z.string().nullable(),
    earlierRecordId: z.uuid().nullable().meta({ description: "A guard's refusal: the earlier record it points to." }),
    classification: classificationSchema,
    task: taskSchema.nullable().meta({ description: 'The MCP task this record saw (its id and the status then).' }),
  }),
  entry('approval_requested', {
    approvalId: z.string(),
    requestedBy: z.string(),
    organization: z.string(),
    principal: z.string(),
    agent: z.string().nullable(),
    server: z.string(),
    tool: z.string(),
    summary: z.string(),
    requiredApprovals: z.number().int(),
    resource: z.strictObject({ type: z.string(), id: z.string() }).nullable(),
  }),
  entry('decision', {
    approvalId: z.string(),
    reviewer: z.string(),
    decision: z.enum(decisionKinds),
    reason: z.string(),
  }),
  entry('grant_issued', { approvalId: z.string(), grantId: z.string(), issuedBy: z.string(), expiresAt: wireInstant }),
  entry('grant_redeemed', {
    approvalId: z.string(),
    grantId: z.string(),
    redeemedBy: z.string(),
    server: z.string(),
    tool: z.string(),
  }),
  entry('revoked', {
    approvalId: z.string(),
    revokedBy: z.string(),
    reason: z.string(),
    grantId: z.string().nullable(),
  }),
  entry('expired', { approvalId: z.string(), what: z.enum(['request', 'grant']), grantId: z.string().nullable() }),
]);

export const incidentBodySchema = z
  .strictObject({
    requestRef: z.string(),
    sentence: z.string().meta({ description: 'One sentence of what was and was not done.' }),
    summary: z.strictObject({
      done: z.array(z.string()),
      notDone: z.array(z.string()),
      unknown: z.array(z.string()),
      unknownTools: z.array(z.string()),
    }),
    findings: z.array(
      z.strictObject({
        kind: z.enum(findingKinds),
        severity: z.enum(['high', 'medium', 'low']),
        recordIds: z.array(z.string()),
        explanation: z.string(),
      }),
    ),
    timeline: z.array(timelineEntrySchema).meta({ description: 'Outcome records and approval steps, oldest first.' }),
    approvals: z.array(
      z.strictObject({
        id: z.string(),
        status: z.enum(approvalStatuses),
        server: z.string(),
        tool: z.string(),
        principal: z.string(),
        summary: z.string(),
        requiredApprovals: z.number().int(),
        approvals: z.number().int(),
        createdAt: wireInstant,
      }),
    ),
  })
  .meta({ description: 'Everything known under one request reference.' });
