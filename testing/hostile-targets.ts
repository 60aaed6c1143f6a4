// Shared setup of the hostile-body tests (app/api/v1/hostile-bodies-*.test.ts): every /api/v1 route
// that takes a body, as a target with its fields' types, ceilings and free text, and the check that a refusal wrote nothing and left the process answering.
import { expect } from 'vitest';
import { api, call, type CallOptions, expectOk, expectProblem, type Reply } from '@/testing/api-harness';
import {
  type Actors,
  approvalBody,
  blockedRecord,
  fullRecord,
  makeActors,
  newApproval,
  newGrant,
  redeemBody,
} from '@/testing/api-bodies';
import { type JsonType, paths } from '@/testing/hostile-values';
import { uniq } from '@/testing/factories';
import { stateFingerprint } from '@/testing/state';

export let actors: Actors;

export type Target = {
  name: string;
  send: (body: unknown, extra?: Partial<CallOptions>) => Promise<Reply>;
  body: () => Record<string, unknown>;
  /** The paths fuzzed (default: every path of the body). */
  only?: (path: string) => boolean;
  /** Objects that drop unknown keys instead of refusing them (MCP's annotations, by design). */
  lenient: string[];
  /** Objects kept as sent, any key in them (a tool's JSON Schema): nesting and storability are refused, naming the object. */
  kept?: string[];
  /**
   * Objects whose members are the caller's own (a tool's arguments): any key is theirs to send, and
   * a change inside one is refused naming the object itself.
   */
  opaque?: string[];
  /** Accepted JSON types where the template's own type does not say it all. */
  types: Record<string, JsonType[]>;
  /** Ceilings of string fields. */
  max: Record<string, number>;
  /** Free-text fields: stored masked (the rest are identifiers, kept as sent). */
  masked: string[];
  /** Values of another JSON type that are nonetheless valid (a version's decimal digits). */
  alsoValid?: (path: string, v: unknown) => boolean;
  /** Whether a reply to a valid body means it was accepted (redeem answers a mismatch). */
  accepted: (r: Reply) => void;
  /** The body's size limit, where the route's is not the usual 1 MiB. */
  maxBytes?: number;
  /**
   * Fields a server wrote (a tool's title, description, schemas): a value too long, too deep or not
   * storable holds that tool for review instead of refusing the body (docs/catalog.md).
   */
  held?: string[];
};

/** The answer of policy/evaluate when its one tool is held because of what its server wrote. */
export function expectHeld(r: Reply): void {
  expectOk(r, [200]);
  expect(r.json.tools).toHaveLength(1);
  expect(r.json.tools[0].held).toBe(true);
  expect(r.json.tools[0].reason).toMatch(/^definition (too large to review|cannot be reviewed): /);
}

export const MIB = 1024 * 1024;

export const fixed: { pending: string; revocable: string; grant: string; catalogServer: string } = {
  pending: '',
  revocable: '',
  grant: '',
  catalogServer: '',
};

export const R = 'records.0.';
export const outcomeMax = {
  eventId: 128,
  requestRef: 200,
  idempotencyKey: 255,
  organization: 200,
  principal: 200,
  agent: 200,
  server: 200,
  serverVersion: 100,
  protocolVersion: 64,
  'tool.name': 200,
  'tool.annotations.title': 200,
  mcpRequestId: 200,
  sessionId: 1024,
  grantId: 200,
  summary: 500,
  'observed.result.errorCategory': 100,
};
export const approvalMax = {
  requestRef: 200,
  organization: 200,
  principal: 200,
  agent: 200,
  server: 200,
  'tool.name': 200,
  'tool.annotations.title': 200,
  summary: 500,
  'resource.type': 100,
  'resource.id': 200,
};
export const prefixed = (o: Record<string, number>, p: string) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [p + k, v]));

export const outcomes: Target = {
  name: 'POST /outcomes',
  send: (body, extra) => call(api.postOutcomes, { token: actors.key, body, ...extra }),
  body: () => ({ records: [fullRecord()] }),
  lenient: [`${R}tool.annotations`],
  types: { [`${R}mcpRequestId`]: ['string', 'number'] },
  max: prefixed(outcomeMax, R),
  masked: ['agent', 'tool.annotations.title', 'mcpRequestId', 'summary', 'observed.result.errorCategory'].map(
    (p) => R + p,
  ),
  accepted: (r) => expectOk(r, [200]),
};

export const neverSent: Target = {
  ...outcomes,
  name: 'POST /outcomes (never sent)',
  body: () => ({ records: [blockedRecord()] }),
  only: (p) => p.startsWith(`${R}observed`),
};

export const approvals: Target = {
  name: 'POST /approvals',
  send: (body, extra) =>
    call(api.postApproval, {
      token: actors.key,
      body,
      ...extra,
      headers: { 'idempotency-key': uniq('idem'), ...extra?.headers },
    }),
  body: () => approvalBody(),
  // The arguments' own members are whatever JSON the tool takes: any change to one is a digest
  // mismatch, refused naming `arguments` (app/api/v1/approvals' tests go through them).
  only: (p) => !p.startsWith('arguments.'),
  lenient: ['tool.annotations'],
  opaque: ['arguments'],
  types: {},
  max: approvalMax,
  masked: ['agent', 'tool.annotations.title', 'summary', 'resource.type', 'resource.id'],
  accepted: (r) => expectOk(r, [201]),
};

export const decisions: Target = {
  name: 'POST /approvals/{id}/decisions',
  send: (body, extra) => call(api.decide, { token: actors.reviewer, params: { id: fixed.pending }, body, ...extra }),
  body: () => ({ decision: 'approve', reason: 'Checked the order and the amount', version: 1 }),
  lenient: [],
  types: {},
  max: { reason: 1000 },
  masked: ['reason'],
  alsoValid: (path, v) => path === 'version' && typeof v === 'string' && /^\d+$/.test(v),
  accepted: (r) => expectOk(r, [200]),
};

export const revocations: Target = {
  name: 'POST /approvals/{id}/revoke',
  send: (body, extra) => call(api.revoke, { token: actors.admin, params: { id: fixed.revocable }, body, ...extra }),
  body: () => ({ reason: 'Asked for by mistake' }),
  lenient: [],
  types: {},
  max: { reason: 1000 },
  masked: ['reason'],
  accepted: (r) => expectOk(r, [200]),
};

export const redemptions: Target = {
  name: 'POST /grants/{grantId}/redeem',
  send: (body, extra) => call(api.redeem, { token: actors.key, params: { grantId: fixed.grant }, body, ...extra }),
  body: () => redeemBody(),
  lenient: [],
  types: {},
  max: { server: 200, tool: 200 },
  masked: [],
  // Past the schema, a name other than the approved one is a mismatch, not a redemption.
  accepted: (r) => expect(r.json?.errors?.[0]?.message ?? r.status).toMatch(/differs from the approved/),
};

export const trust: Target = {
  name: 'POST /servers/trust',
  send: (body, extra) => call(api.trust, { token: actors.admin, body, ...extra }),
  body: () => ({ name: uniq('srv') }),
  lenient: [],
  types: {},
  max: { name: 200 },
  masked: [],
  accepted: (r) => expectOk(r, [200]),
};

// A gateway's report of a server's tools: full definitions, pinned as sent (a fresh server each time).
export const evaluations: Target = {
  name: 'POST /policy/evaluate',
  send: (body, extra) => call(api.evaluatePolicy, { token: actors.key, body, ...extra }),
  body: () => ({
    server: uniq('srv'),
    tools: [
      {
        name: 'refund_payment',
        title: 'Refund a payment',
        description: 'Refunds a payment in full or in part to the card it was paid from.',
        inputSchema: { type: 'object', properties: { payment_id: { type: 'string' } }, required: ['payment_id'] },
        outputSchema: { type: 'object', properties: { refunded: { type: 'integer' } } },
        annotations: { title: 'Refund', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      },
    ],
  }),
  // Inside a schema any key and value are the server's: only nesting and storability are refused.
  only: (p) => !/^tools\.0\.(input|output)Schema\./.test(p),
  lenient: ['tools.0.annotations'],
  kept: ['tools.0.inputSchema', 'tools.0.outputSchema'],
  types: {},
  // The description's bound is the whole definition's (TOOL_DEFINITION_MAX_BYTES), not its own.
  max: { server: 200, 'tools.0.name': 200, 'tools.0.title': 1000, 'tools.0.annotations.title': 200 },
  masked: [],
  accepted: (r) => expectOk(r, [200]),
  maxBytes: 8 * MIB,
  held: [
    'tools.0.title',
    'tools.0.description',
    'tools.0.annotations.title',
    'tools.0.inputSchema',
    'tools.0.outputSchema',
  ],
};

// Accepting a held change: past the schema, a hash that is not the one held is a conflict (or the
// tool unknown): what the valid bodies here get.
export const toolAccepts: Target = {
  name: 'POST /tools/accept',
  send: (body, extra) => call(api.acceptTool, { token: actors.admin, body, ...extra }),
  body: () => ({ server: fixed.catalogServer, tool: 'refund_payment', definitionHash: `sha256:${'0'.repeat(64)}` }),
  lenient: [],
  types: {},
  max: { server: 200, tool: 200 },
  masked: [],
  accepted: (r) => expectProblem(r, [404, 409]),
};

export const targets = [
  outcomes,
  neverSent,
  approvals,
  decisions,
  revocations,
  redemptions,
  trust,
  evaluations,
  toolAccepts,
];
export const fieldsOf = (t: Target) => paths(t.body()).filter((p) => t.only?.(p) ?? true);

/** Runs `refused` and checks that nothing was written and that the process still answers. */
export async function unchanged(refused: () => Promise<void>) {
  const before = await stateFingerprint();
  await refused();
  expect(await stateFingerprint()).toBe(before);
  expectOk(await call(api.me, { token: actors.key }), [200]);
}

export async function setUpTargets() {
  actors = await makeActors();
  fixed.pending = (await newApproval(actors)).id;
  fixed.revocable = (await newApproval(actors)).id;
  fixed.grant = await newGrant(actors);
  // A server whose one tool is pinned, nothing held: accepting anything on it is a conflict.
  const pinned = evaluations.body();
  fixed.catalogServer = pinned.server as string;
  expectOk(await evaluations.send(pinned), [200]);
}
