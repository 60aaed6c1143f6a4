// An in-process stand-in for Countersign's approvals, grants and outcomes API (docs/api.md), for the
// integration tests of lib/mcp: the wrapper takes it as its `fetch`. It answers what the real
// console answers (lib/mcp/fake-countersign.test.ts sends the same requests to both and compares):
// approvals and grants as fake-countersign-approvals.ts says, policy/evaluate with the catalog's
// pinning as fake-countersign-catalog.ts says, outcome records stored and classified, state
// checks, problem+json refusals. What it does not model: people decide on the
// first poll (`decide`), all approvals at once; the guards (asked with a staging) let every write through unless a test
// scripts their answer (`guard`): they decide on the real console's records, and are tested there.
import { randomUUID } from 'node:crypto';
import { outcomeBatchSchema, type Outcome } from '@/lib/outcomes/schemas';
import { classifyRecord, CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import { resolvedNextStep, stateCheckBodySchema, type Resolution } from '@/lib/outcomes/resolution';
import type { Classification } from '@/lib/outcomes/schemas';
import { fakeApprovals, type Decision, type FakeApproval, type FakePolicy } from './fake-countersign-approvals';
import { fakeCatalog } from './fake-countersign-catalog';
import { invalid, json, problem } from './fake-countersign-responses';
import type { GuardAnswer } from '@/lib/guards/schemas';
import type { GuardQuestion } from './fake-countersign-approvals';

export type { Decision, FakeApproval, FakePolicy } from './fake-countersign-approvals';

export function fakeCountersign(
  options: {
    decide?: (approval: FakeApproval) => Decision;
    guard?: (question: GuardQuestion) => GuardAnswer;
  } & FakePolicy = {},
) {
  const outcomes: Outcome[] = [];
  // What the console stores per record: its id, classification, and a resolution once checked.
  type Stored = {
    id: string;
    record: Outcome;
    delivery: string;
    classification: Classification;
    trusted: boolean;
    receivedAt: string;
    resolution: Resolution | null;
  };
  const stored = new Map<string, Stored>();
  // The record as GET /api/v1/outcomes/{id} shows it (lib/outcomes/views.ts outcomeViewSchema);
  // unlike the console, the fake masks nothing.
  const outcomeView = (s: Stored) => {
    const r = s.record;
    return {
      id: s.id,
      eventId: r.eventId,
      occurredAt: r.occurredAt,
      durationMs: r.durationMs ?? null,
      requestRef: r.requestRef,
      idempotencyKey: r.idempotencyKey ?? null,
      attempt: r.attempt ?? null,
      organization: r.organization,
      principal: r.principal,
      agent: r.agent ?? null,
      server: r.server,
      serverVersion: r.serverVersion ?? null,
      protocolVersion: r.protocolVersion ?? null,
      tool: { name: r.tool.name, annotations: r.tool.annotations ?? null },
      mcpRequestId: r.mcpRequestId ?? null,
      grantId: r.grantId ?? null,
      earlierRecordId: r.earlierRecordId ?? null,
      argsDigest: r.argsDigest ?? null,
      summary: r.summary ?? null,
      observed: r.observed,
      classification: s.resolution
        ? { ...s.classification, nextStep: resolvedNextStep(s.resolution) }
        : s.classification,
      annotationsTrusted: s.trusted,
      receivedAt: s.receivedAt,
      classifierVersion: CLASSIFIER_VERSION,
      resolution: s.resolution,
    };
  };
  const storedById = new Map<string, string>();
  const { approvals, guardChecks, stage, read, redeem, withdraw } = fakeApprovals(options);
  const catalog = fakeCatalog(options);
  let down = false;

  const now = () => new Date().toISOString();

  const fetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    if (down)
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    const url = new URL(input);
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : null;
    const headers = new Headers(init?.headers);
    if (!headers.get('authorization')?.startsWith('Bearer ')) return problem(401, 'unauthenticated');

    if (method === 'POST' && url.pathname === '/api/v1/outcomes') {
      const parsed = outcomeBatchSchema.safeParse(body);
      if (!parsed.success) return invalid(parsed.error.issues);
      outcomes.push(...parsed.data.records);
      const trusted = new Set(options.trustedServers ?? []);
      const records = parsed.data.records.map((r) => {
        let s = stored.get(r.eventId);
        const classification = classifyRecord(r, trusted.has(r.server));
        if (!s) {
          s = {
            id: randomUUID(),
            record: r,
            delivery: classification.delivery,
            classification,
            trusted: trusted.has(r.server),
            receivedAt: now(),
            resolution: null,
          };
          stored.set(r.eventId, s);
          storedById.set(s.id, r.eventId);
        }
        return { eventId: r.eventId, id: s.id, classification };
      });
      return json(200, { accepted: parsed.data.records.length, duplicates: 0, records });
    }
    const check = /^\/api\/v1\/outcomes\/([^/]+)\/state-check$/.exec(url.pathname);
    if (method === 'POST' && check) {
      const eventId = storedById.get(check[1]);
      const s = eventId ? stored.get(eventId) : undefined;
      if (!s) return problem(404, 'not_found');
      const parsed = stateCheckBodySchema.safeParse(body);
      if (!parsed.success) return invalid(parsed.error.issues);
      if (s.delivery !== 'unknown' || s.resolution) return problem(409, 'conflict');
      s.resolution = {
        by: 'state_check',
        verdict: parsed.data.verdict,
        at: new Date(),
        who: 'API key',
        note: parsed.data.note,
      };
      return json(200, outcomeView(s));
    }
    if (method === 'POST' && url.pathname === '/api/v1/approvals') {
      const key = headers.get('idempotency-key');
      if (!key?.trim()) return problem(400, 'idempotency_key_required');
      return stage(key, body);
    }
    const get = /^\/api\/v1\/approvals\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && get) return read(get[1]);
    const grant = /^\/api\/v1\/grants\/([^/]+)\/redeem$/.exec(url.pathname);
    if (method === 'POST' && grant) return redeem(grant[1], body);
    const withdrawn = /^\/api\/v1\/approvals\/([^/]+)\/withdraw$/.exec(url.pathname);
    if (method === 'POST' && withdrawn) return withdraw(withdrawn[1], body);
    if (method === 'POST' && url.pathname === '/api/v1/policy/evaluate') return catalog.evaluate(body);
    return problem(404, 'not_found');
  };

  return {
    fetch,
    outcomes,
    approvals,
    guardChecks,
    /** The policy/evaluate bodies received, as sent. */
    evaluated: catalog.evaluated,
    /** An admin accepts the held definition of a tool (false when none is held). */
    acceptTool: catalog.accept,
    /** The resolution each record got from a state check, by eventId. */
    resolutionOf: (eventId: string) => stored.get(eventId)?.resolution ?? null,
    setDown(value: boolean) {
      down = value;
    },
  };
}
