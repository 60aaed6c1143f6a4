// The one registry of /api/v1 routes the API reference is generated from (lib/openapi/document.ts):
// per path and method, the permission (the same `action` the route passes to apiRoute), the zod
// schemas that validate the request (imported, never restated) and the schemas of the answers.
// A guard test compares it with the route files under app/api/v1: their methods, actions and schemas.
import { z } from 'zod';
import { policyEvaluateSchema } from '@/lib/approvals/schemas';
import { policyEvaluationSchema } from '@/lib/approvals/views';
import { acceptToolSchema, acceptedToolSchema, toolCatalogSchema, toolsQuerySchema } from '@/lib/catalog/schemas';
import { auditVerificationSchema } from '@/lib/audit/views';
import { clientDescriptionSchema } from '@/lib/credentials/views';
import { incidentQuerySchema, incidentRefSchema } from '@/lib/incidents/query';
import { incidentBodySchema } from '@/lib/incidents/views';
import { trustServerSchema, trustedServerViewSchema } from '@/lib/mcp-servers/schemas';
import { outcomeQuerySchema } from '@/lib/outcomes/query';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import { stateCheckBodySchema } from '@/lib/outcomes/resolution';
import { guardAnswerSchema, guardCheckSchema } from '@/lib/guards/schemas';
import { ingestResponseSchema, outcomePageSchema, outcomeViewSchema } from '@/lib/outcomes/views';
import * as ex from './examples';
import { exportTraceServiceRequestSchema, exportTraceServiceResponseSchema } from './otlp';
import { approvalRoutes } from './routes-approvals';
import type { RouteEntry } from './types';

export type { Answer, Method, Operation, RouteEntry } from './types';
export { methods } from './types';

const id = z.uuid().meta({ description: 'The id the API returned.' });

export const apiRoutes: RouteEntry[] = [
  {
    path: '/openapi.json',
    operations: {
      GET: {
        summary: 'This document',
        description: 'The OpenAPI 3.1 document of every /api/v1 route, generated from the schemas that validate them.',
        tag: 'Reference',
        action: null,
        answers: [
          { status: 200, description: 'The OpenAPI document.', schema: z.looseObject({ openapi: z.string() }) },
        ],
      },
    },
  },
  {
    path: '/me',
    operations: {
      GET: {
        summary: 'Who this credential is',
        description: 'Check a credential before wiring it in.',
        tag: 'Identity',
        action: 'identity.read',
        answers: [{ status: 200, description: 'The API key or person.', schema: clientDescriptionSchema }],
      },
    },
  },
  {
    path: '/outcomes',
    operations: {
      POST: {
        summary: 'Post outcome records',
        description:
          'A batch of 1 to 1000 records, stored whole or not at all. Re-sending an eventId with the same content is a duplicate; with other content, 422 idempotency_key_reused.',
        tag: 'Outcomes',
        action: 'outcomes.write',
        body: outcomeBatchSchema,
        bodyExample: ex.outcomeBatchExample,
        answers: [{ status: 200, description: 'Stored, with each record classified.', schema: ingestResponseSchema }],
        failures: ['idempotency_key_reused'],
      },
      GET: {
        summary: 'List outcome records',
        description: 'Newest first, cursor-paginated; filters combine.',
        tag: 'Outcomes',
        action: 'outcomes.read',
        query: outcomeQuerySchema,
        answers: [{ status: 200, description: 'A page of records.', schema: outcomePageSchema }],
      },
    },
  },
  {
    path: '/outcomes/{id}',
    params: { id },
    operations: {
      GET: {
        summary: 'One outcome record',
        tag: 'Outcomes',
        action: 'outcomes.read',
        answers: [{ status: 200, description: 'The record.', schema: outcomeViewSchema }],
        failures: ['not_found'],
      },
    },
  },
  {
    path: '/outcomes/{id}/state-check',
    params: { id },
    operations: {
      POST: {
        summary: 'Record a state check on an unknown',
        description:
          'Support, reviewers and admins (token or session) and API keys with outcomes:write: whether the write of an unresolved unknown record took effect, with a note (≤ 500, masked). Audited as outcome.state_check. 409 when the record is not an unresolved unknown, naming what resolved it, by whom and when.',
        tag: 'Outcomes',
        action: 'outcomes.state_check',
        body: stateCheckBodySchema,
        bodyExample: ex.stateCheckExample,
        answers: [{ status: 200, description: 'The record, resolved.', schema: outcomeViewSchema }],
        failures: ['not_found', 'conflict'],
      },
    },
  },
  {
    path: '/guards/check',
    operations: {
      POST: {
        summary: 'Ask whether a call may go to its server',
        description:
          "The guards at the point of execution, decided by the console from the records it holds: allow; hold (a write after a permission refusal in the request waits for approval); or refuse (outcome_unknown, already_done, idempotency_key_reused, not_retryable, retry_too_soon, budget_exhausted), stored as a never_sent record under the body's eventId and sent as a call.refused webhook. `records` (at most 100) are the caller's records not posted yet, stored first as POST /outcomes stores them. The same eventId again answers the same refusal.",
        tag: 'Guards',
        action: 'outcomes.write',
        body: guardCheckSchema,
        bodyExample: ex.guardCheckExample,
        answers: [{ status: 200, description: 'The decision.', schema: guardAnswerSchema }],
        failures: ['idempotency_key_reused'],
      },
    },
  },
  {
    path: '/otlp/v1/traces',
    operations: {
      POST: {
        summary: 'Export traces over OTLP/HTTP',
        description:
          'Each CLIENT span whose mcp.method.name is tools/call becomes one outcome record, eventId otel:<traceId>:<spanId> (a re-export is a duplicate); other spans are skipped. Optionally gzip (Content-Encoding: gzip). Configure an exporter with OTEL_EXPORTER_OTLP_ENDPOINT=<console>/api/v1/otlp.',
        tag: 'OpenTelemetry',
        action: 'outcomes.write',
        decodedBody: exportTraceServiceRequestSchema,
        bodyAlternatives: { 'application/x-protobuf': 'The same ExportTraceServiceRequest, protobuf-encoded.' },
        bodyExample: ex.otlpJsonExample,
        answers: [
          {
            status: 200,
            description: 'Accepted; partialSuccess counts the spans refused and names why.',
            schema: exportTraceServiceResponseSchema,
            alternatives: { 'application/x-protobuf': 'The same ExportTraceServiceResponse, protobuf-encoded.' },
          },
        ],
      },
    },
  },
  ...approvalRoutes,
  {
    path: '/incidents/{ref}',
    params: { ref: incidentRefSchema.meta({ description: 'The request reference.' }) },
    operations: {
      GET: {
        summary: 'An incident: everything under one request reference',
        tag: 'Incidents',
        action: 'incidents.read',
        query: incidentQuerySchema,
        answers: [
          {
            status: 200,
            description: 'Summary, findings and timeline.',
            schema: incidentBodySchema,
            alternatives: { 'text/markdown': 'With format=markdown: the same as a redacted Markdown report.' },
          },
        ],
        failures: ['not_found'],
      },
    },
  },
  {
    path: '/audit/verify',
    operations: {
      GET: {
        summary: 'Verify the audit chain',
        tag: 'Audit',
        action: 'audit.read',
        answers: [
          {
            status: 200,
            description: 'Whether every entry follows from its predecessor.',
            schema: auditVerificationSchema,
          },
        ],
      },
    },
  },
  {
    path: '/servers/trust',
    operations: {
      POST: {
        summary: 'Trust a server’s tool annotations',
        tag: 'Servers',
        action: 'servers.manage',
        body: trustServerSchema,
        bodyExample: ex.trustServerExample,
        answers: [{ status: 200, description: 'The server, now trusted.', schema: trustedServerViewSchema }],
      },
    },
  },
  {
    path: '/policy/evaluate',
    operations: {
      POST: {
        summary: 'What policy requires of some tools',
        description:
          'For gateways and agents: per tool of one server, whether it is blocked or held, how many approvals a call needs and why, and the guards’ budgets it works under (failed attempts and calls in one request reference, the backoff base), resolved from its rule, its server’s rule and the defaults. Each tool as `tools/list` gave it; a tool sent with its inputSchema is pinned: accepted at its first sighting, held when it differs from the accepted definition (docs/catalog.md). Bodies up to 8 MiB. A definition over 256 KiB as canonical JSON (or otherwise unfit for review: a long title, a schema nested over 64 levels) holds its tool with a reason instead of refusing the request; nothing of it is stored.',
        tag: 'Approvals',
        action: 'policy.evaluate',
        body: policyEvaluateSchema,
        bodyExample: ex.policyEvaluateExample,
        answers: [{ status: 200, description: 'One verdict per tool asked.', schema: policyEvaluationSchema }],
      },
    },
  },
  {
    path: '/tools',
    operations: {
      GET: {
        summary: 'A server’s tool catalog',
        description:
          'Each tool’s accepted definition and the change held, if any (which parts differ), what policy requires of it, and the lint of every definition. 404 when no gateway has reported the server’s tools.',
        tag: 'Tools',
        action: 'outcomes.read',
        query: toolsQuerySchema,
        answers: [{ status: 200, description: 'The catalog of that server.', schema: toolCatalogSchema }],
        failures: ['not_found'],
      },
    },
  },
  {
    path: '/tools/accept',
    operations: {
      POST: {
        summary: 'Accept a held tool definition',
        description:
          'Admins: the held definition with that hash becomes the accepted one, and the gateway shows the tool again. 409 when that is not (or no longer) the definition held. Audited.',
        tag: 'Tools',
        action: 'servers.manage',
        body: acceptToolSchema,
        bodyExample: ex.acceptToolExample,
        answers: [{ status: 200, description: 'The definition now accepted.', schema: acceptedToolSchema }],
        failures: ['not_found', 'conflict'],
      },
    },
  },
];
