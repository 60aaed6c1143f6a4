import 'server-only';
import { Prisma } from '@/lib/generated/prisma/client';
import { CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import type { Classification, Outcome, ToolAnnotations } from '@/lib/outcomes/schemas';
import { mask } from '@/lib/redaction/mask';
import { fail } from '@/lib/result';
import type { IngestRow } from './sql';
import { keyedHash as secretHash } from '../secrets';

// Session ids and record contents are kept only as keyed hashes (HMAC-SHA256 under keys derived from
// AUTH_SECRET, lib/server/secrets.ts). Keyed, so a copy of the database cannot be brute-forced back
// to them: a summary's masked SSN has only 10^9 values. The price: rotating AUTH_SECRET changes
// both, so a replay of a record sent before the rotation reads as different content (422) and a
// session's records no longer link across it.
export function keyedHash(label: 'outcome-session' | 'outcome-content', value: string): string {
  return secretHash(label === 'outcome-session' ? 'outcome-session-hash' : 'outcome-content-hash', value);
}

export type IngestedRecord = { eventId: string; id: string; classification: Classification };
export type IngestResponse = { accepted: number; duplicates: number; records: IngestedRecord[] };

// Free text is masked before it is written. Identifiers (eventId, requestRef, idempotencyKey,
// organization, principal, server, tool name, grantId, versions) are kept as sent: search,
// filters, findings and the approval rules compare them exactly, and masking would merge
// different ones (every e-mail principal into one "[masked:email]").
export function toRow(r: Outcome, contentHash: string, c: Classification, trusted: boolean): IngestRow {
  const annotations: ToolAnnotations | null | undefined = r.tool.annotations && {
    ...r.tool.annotations,
    title: mask(r.tool.annotations.title),
  };
  const result = r.observed.result && { ...r.observed.result, errorCategory: mask(r.observed.result.errorCategory) };
  const row: IngestRow = {
    event_id: r.eventId,
    occurred_at: r.occurredAt,
    duration_ms: r.durationMs,
    request_ref: r.requestRef,
    idempotency_key: r.idempotencyKey,
    attempt: r.attempt,
    organization: r.organization,
    principal: r.principal,
    agent: mask(r.agent),
    server: r.server,
    server_version: r.serverVersion,
    protocol_version: r.protocolVersion,
    tool_name: r.tool.name,
    tool_annotations: annotations,
    mcp_request_id: typeof r.mcpRequestId === 'string' ? mask(r.mcpRequestId) : r.mcpRequestId,
    session_hash: r.sessionId ? keyedHash('outcome-session', r.sessionId) : null,
    grant_id: r.grantId,
    args_digest: r.argsDigest,
    summary: mask(r.summary),
    task_id: r.observed.task?.id,
    observed: { ...r.observed, result },
    boundary: c.boundary,
    delivery: c.delivery,
    category: c.category,
    retry: c.retry,
    read_only: c.readOnly,
    what_happened: c.whatHappened,
    next_step: c.nextStep,
    classifier_version: CLASSIFIER_VERSION,
    annotations_trusted: trusted,
    content_hash: contentHash,
    earlier_record_id: r.earlierRecordId,
  };
  // Absent, not JSON null: a jsonb column would otherwise hold the value `null`, not NULL.
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v != null)) as IngestRow;
}

export const classificationSelect = {
  boundary: true,
  delivery: true,
  category: true,
  retry: true,
  readOnly: true,
  whatHappened: true,
  nextStep: true,
} satisfies Prisma.OutcomeRecordSelect;

export const toClassification = (
  r: Prisma.OutcomeRecordGetPayload<{ select: typeof classificationSelect }>,
): Classification => ({
  boundary: r.boundary,
  delivery: r.delivery,
  category: r.category,
  retry: r.retry,
  readOnly: r.readOnly,
  whatHappened: r.whatHappened,
  nextStep: r.nextStep,
});

export const reused = (paths: string[]) =>
  fail(
    'idempotency_key_reused',
    `${paths[0]} was already sent with different content; nothing was stored.`,
    paths.map((path) => ({ path, message: 'already sent with different content' })),
  );
