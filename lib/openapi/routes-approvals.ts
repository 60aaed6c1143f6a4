// The approvals and grants routes of the registry (./routes.ts; docs/api.md, "Approvals and grants").
import { z } from 'zod';
import {
  approvalListQuerySchema,
  approvalRequestSchema,
  decisionSchema,
  idempotencyKeySchema,
  redeemSchema,
  revokeSchema,
} from '@/lib/approvals/schemas';
import {
  approvalCreatedSchema,
  approvalPageSchema,
  approvalViewSchema,
  pendingCountSchema,
  redemptionSchema,
} from '@/lib/approvals/views';
import { guardRefusalSchema } from '@/lib/guards/schemas';
import * as ex from './examples';
import type { RouteEntry } from './types';

const id = z.uuid().meta({ description: 'The id the API returned.' });

export const approvalRoutes: RouteEntry[] = [
  {
    path: '/approvals',
    operations: {
      POST: {
        summary: 'Request approval for a write',
        description:
          'arguments: the object the tool will be called with; argsDigest must be sha256: + the hex SHA-256 of its canonical JSON (RFC 8785), else 422 arguments_digest_mismatch; over 64 KiB: 422 arguments_too_large; missing: 422 arguments_required (unless COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS=off). Same Idempotency-Key and body: the original answer (Idempotent-Replayed: true). Same key, other body (sent at once or later): 422 idempotency_key_reused. Same key still in flight after a few seconds: 409. guard: the guards are asked first, in this request (scope outcomes:write too): a write they refuse is not staged, and the answer is 200 with the refusal; the Idempotency-Key does not cover guard.',
        tag: 'Approvals',
        action: 'approvals.request',
        body: approvalRequestSchema,
        bodyExample: ex.approvalRequestExample,
        headers: [
          { name: 'Idempotency-Key', schema: idempotencyKeySchema, required: true, description: 'Missing: 400.' },
        ],
        answers: [
          {
            status: 201,
            description: 'The request, pending (or approved at once when policy needs no approval).',
            schema: approvalCreatedSchema,
            headers: { 'Idempotent-Replayed': 'true when this is the answer to an earlier identical request.' },
          },
          {
            status: 200,
            description: 'Asked with guard: the guards refused the write, which was not staged.',
            schema: z.strictObject({ guard: guardRefusalSchema }),
          },
        ],
        failures: [
          'idempotency_key_required',
          'idempotency_key_reused',
          'arguments_required',
          'arguments_too_large',
          'arguments_digest_mismatch',
          'conflict',
        ],
      },
      GET: {
        summary: 'List approval requests',
        description:
          'pending runs soonest-to-expire first; everything else newest first. queue=needs_my_decision: pending requests the caller may decide now; queue=waiting_on_others: the other pending ones.',
        tag: 'Approvals',
        action: 'approvals.read',
        query: approvalListQuerySchema,
        answers: [{ status: 200, description: 'A page of requests.', schema: approvalPageSchema }],
      },
    },
  },
  {
    path: '/approvals/pending-count',
    operations: {
      GET: {
        summary: 'How many requests wait for the caller’s decision',
        description:
          'The *needs my decision* queue (GET /approvals?queue=needs_my_decision): pending, not on the caller’s own principal, not already decided by them. 0 for anyone who may not decide.',
        tag: 'Approvals',
        action: 'console.view',
        answers: [{ status: 200, description: 'The count.', schema: pendingCountSchema }],
      },
    },
  },
  {
    path: '/approvals/{id}',
    params: { id },
    operations: {
      GET: {
        summary: 'One approval request',
        tag: 'Approvals',
        action: 'approvals.read',
        answers: [{ status: 200, description: 'The request, its decisions and grant.', schema: approvalViewSchema }],
        failures: ['not_found'],
      },
    },
  },
  {
    path: '/approvals/{id}/decisions',
    params: { id },
    operations: {
      POST: {
        summary: 'Approve or deny',
        description:
          'People only. 403 when the reviewer is the request’s principal; 409 when the version is stale, the request is no longer pending, or this reviewer already decided (naming who decided what, when).',
        tag: 'Approvals',
        action: 'approval.decide',
        body: decisionSchema,
        bodyExample: ex.decisionExample,
        answers: [{ status: 200, description: 'The new state.', schema: approvalViewSchema }],
        failures: ['not_found', 'conflict'],
      },
    },
  },
  {
    path: '/approvals/{id}/revoke',
    params: { id },
    operations: {
      POST: {
        summary: 'Revoke a request or its unredeemed grant',
        tag: 'Approvals',
        action: 'approval.revoke',
        body: revokeSchema,
        bodyExample: ex.revokeExample,
        answers: [{ status: 200, description: 'The new state.', schema: approvalViewSchema }],
        failures: ['not_found', 'conflict'],
      },
    },
  },
  {
    path: '/approvals/{id}/withdraw',
    params: { id },
    operations: {
      POST: {
        summary: 'Withdraw a pending request the same API key staged',
        description:
          'The staging key only (scope approvals:request): the request becomes revoked, the key named as who did it. 404 for a request another key staged; 409 when it is no longer pending.',
        tag: 'Approvals',
        action: 'approvals.request',
        body: revokeSchema,
        bodyExample: ex.withdrawExample,
        answers: [{ status: 200, description: 'The new state.', schema: approvalViewSchema }],
        failures: ['not_found', 'conflict'],
      },
    },
  },
  {
    path: '/grants/{grantId}/redeem',
    params: { grantId: z.uuid().meta({ description: 'The grant’s id.' }) },
    operations: {
      POST: {
        summary: 'Redeem a grant, once',
        description:
          '409 already redeemed; 410 when expired (database clock) or revoked; 422 when server, tool or digest differ from what was approved.',
        tag: 'Approvals',
        action: 'grants.redeem',
        body: redeemSchema,
        bodyExample: ex.redeemExample,
        answers: [{ status: 200, description: 'Redeemed.', schema: redemptionSchema }],
        failures: ['not_found', 'conflict', 'gone'],
      },
    },
  },
];
