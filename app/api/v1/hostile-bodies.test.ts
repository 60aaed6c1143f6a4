// Hostile bodies for every /api/v1 route that takes one (issue #7, "Hostile input"): wrong types
// for every field, deep nesting, sizes at, just over and far over each limit, unicode edge cases,
// prototype keys at every level and broken transports. Each refusal is a problem+json 4xx from
// API.md's list naming the field at fault, writes nothing, and the process answers normally after.
// The route handlers run in-process with real Requests on a real database; fast-check varies the
// values with a moderate number of runs so the file stays well under a minute.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
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
import {
  getAt,
  hostileText,
  jsonType,
  type JsonType,
  paths,
  setAt,
  unstorable,
  UNSTORABLE,
} from '@/testing/hostile-values';
import { maskText } from '@/lib/redaction/mask';
import { uniq } from '@/testing/factories';
import { stateFingerprint } from '@/testing/state';

// Cookie sessions are not used here (every call carries a bearer credential), and next-auth does
// not load outside Next: the session reader answers "no session".
vi.mock('@/lib/server/http/auth', () => ({ auth: async () => null }));

let actors: Actors;

type Target = {
  name: string;
  send: (body: unknown, extra?: Partial<CallOptions>) => Promise<Reply>;
  body: () => Record<string, unknown>;
  /** The paths fuzzed (default: every path of the body). */
  only?: (path: string) => boolean;
  /** Objects that drop unknown keys instead of refusing them (MCP's annotations, by design). */
  lenient: string[];
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
};

const fixed: { pending: string; revocable: string; grant: string } = { pending: '', revocable: '', grant: '' };

const R = 'records.0.';
const outcomeMax = {
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
const approvalMax = {
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
const prefixed = (o: Record<string, number>, p: string) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [p + k, v]));

const outcomes: Target = {
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

const neverSent: Target = {
  ...outcomes,
  name: 'POST /outcomes (never sent)',
  body: () => ({ records: [blockedRecord()] }),
  only: (p) => p.startsWith(`${R}observed`),
};

const approvals: Target = {
  name: 'POST /approvals',
  send: (body, extra) =>
    call(api.postApproval, {
      token: actors.key,
      body,
      ...extra,
      headers: { 'idempotency-key': uniq('idem'), ...extra?.headers },
    }),
  body: () => approvalBody(),
  lenient: ['tool.annotations'],
  types: {},
  max: approvalMax,
  masked: ['agent', 'tool.annotations.title', 'summary', 'resource.type', 'resource.id'],
  accepted: (r) => expectOk(r, [201]),
};

const decisions: Target = {
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

const revocations: Target = {
  name: 'POST /approvals/{id}/revoke',
  send: (body, extra) => call(api.revoke, { token: actors.admin, params: { id: fixed.revocable }, body, ...extra }),
  body: () => ({ reason: 'Asked for by mistake' }),
  lenient: [],
  types: {},
  max: { reason: 1000 },
  masked: ['reason'],
  accepted: (r) => expectOk(r, [200]),
};

const redemptions: Target = {
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

const trust: Target = {
  name: 'POST /servers/trust',
  send: (body, extra) => call(api.trust, { token: actors.admin, body, ...extra }),
  body: () => ({ name: uniq('srv') }),
  lenient: [],
  types: {},
  max: { name: 200 },
  masked: [],
  accepted: (r) => expectOk(r, [200]),
};

const targets = [outcomes, neverSent, approvals, decisions, revocations, redemptions, trust];
const fieldsOf = (t: Target) => paths(t.body()).filter((p) => t.only?.(p) ?? true);

/** Runs `refused` and checks that nothing was written and that the process still answers. */
async function unchanged(refused: () => Promise<void>) {
  const before = await stateFingerprint();
  await refused();
  expect(await stateFingerprint()).toBe(before);
  expectOk(await call(api.me, { token: actors.key }), [200]);
}

beforeAll(async () => {
  actors = await makeActors();
  fixed.pending = (await newApproval(actors)).id;
  fixed.revocable = (await newApproval(actors)).id;
  fixed.grant = await newGrant(actors);
});

// ── Wrong types ─────────────────────────────────────────────────────────────────────────────

const valueOf: Record<JsonType, fc.Arbitrary<unknown>> = {
  string: fc.string({ maxLength: 12 }),
  number: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
  boolean: fc.boolean(),
  array: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  object: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  null: fc.constant(null),
};
// null means "absent" for optional fields; it is tried where a field is required, below.
const wrongFor = (accepted: JsonType[]) =>
  fc.oneof(
    ...(['string', 'number', 'boolean', 'array', 'object'] as const)
      .filter((t) => !accepted.includes(t))
      .map((t) => valueOf[t]),
  );

describe('a value of the wrong type in any field: 422 naming it', () => {
  for (const t of targets) {
    it(t.name, async () => {
      const template = t.body();
      for (const path of fieldsOf(t)) {
        const accepted = t.types[path] ?? [jsonType(getAt(template, path))];
        const wrongValue = wrongFor(accepted).filter((v) => !t.alsoValid?.(path, v));
        await unchanged(() =>
          fc.assert(
            fc.asyncProperty(wrongValue, async (wrong) => {
              expectProblem(await t.send(setAt(t.body(), path, wrong)), [422], path);
            }),
            { numRuns: 3 },
          ),
        );
      }
    });
  }

  it('a required field sent as null or left out: 422 naming it', async () => {
    const required = [
      [
        outcomes,
        [
          'records',
          `${R}eventId`,
          `${R}occurredAt`,
          `${R}requestRef`,
          `${R}organization`,
          `${R}principal`,
          `${R}server`,
          `${R}tool`,
          `${R}tool.name`,
          `${R}observed`,
          `${R}observed.sent`,
          `${R}observed.result.isError`,
        ],
      ],
      [
        approvals,
        [
          'requestRef',
          'organization',
          'principal',
          'server',
          'tool',
          'tool.name',
          'argsDigest',
          'summary',
          'resource.type',
          'resource.id',
        ],
      ],
      [decisions, ['decision', 'reason', 'version']],
      [revocations, ['reason']],
      [redemptions, ['server', 'tool', 'argsDigest']],
      [trust, ['name']],
    ] as const;
    await unchanged(async () => {
      for (const [t, fields] of required) {
        for (const path of fields) {
          expectProblem(await t.send(setAt(t.body(), path, null)), [422], path);
          const keys = path.split('.');
          const parent = structuredClone(getAt(t.body(), keys.slice(0, -1).join('.'))) as Record<string, unknown>;
          delete parent[keys.at(-1)!];
          expectProblem(
            await t.send(keys.length > 1 ? setAt(t.body(), keys.slice(0, -1).join('.'), parent) : parent),
            [422],
            path,
          );
        }
      }
    });
  });

  it('a version is a number or its decimal digits (a form), never true or [2]', async () => {
    await unchanged(async () => {
      for (const version of [true, [2], ' ', '', '1e0', '0x1', '1.5', -1, 0, 2 ** 31, '2147483648']) {
        expectProblem(await decisions.send({ ...decisions.body(), version }), [422], 'version');
      }
    });
    // A digit string (what the console's form sends) is still read as the number.
    const { id } = await newApproval(actors);
    expectOk(
      await call(api.decide, {
        token: actors.reviewer,
        params: { id },
        body: { decision: 'deny', reason: 'no', version: '1' },
      }),
      [200],
    );
  });
});

// ── Deep nesting ────────────────────────────────────────────────────────────────────────────

const DEPTH = 100_000;
const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
const HOLE = '"deep-hole-7f3a"';

describe('100,000 levels of nesting anywhere: 422 naming the field, the process unharmed', () => {
  for (const t of targets) {
    it(t.name, async () => {
      await unchanged(async () => {
        expectProblem(await t.send(deepArray), [422], '(body)');
        expectProblem(await t.send(deepObject), [422], 'a'); // an unknown key
        const template = t.body();
        for (const [i, path] of fieldsOf(t).entries()) {
          // Objects that drop unknown keys would take a nested object as one more unknown key.
          const deep = i % 2 && !t.lenient.includes(path) ? deepObject : deepArray;
          const text = JSON.stringify(setAt(t.body(), path, JSON.parse(HOLE))).replace(HOLE, () => deep);
          // In an array field the first element is what is wrong; in an object, a key inside it.
          expectProblem(
            await t.send(text),
            [422],
            Array.isArray(getAt(template, path)) && deep === deepArray ? `${path}.0` : path,
            { within: true },
          );
        }
      });
    });
  }

  it('under a key that MCP annotations ignore: dropped, and the record stored without it', async () => {
    const body = fullRecord();
    const text = JSON.stringify({ records: [setAt(body, 'tool.annotations.x', JSON.parse(HOLE))] }).replace(
      HOLE,
      deepArray,
    );
    const r = await outcomes.send(text);
    expectOk(r, [200]);
    const stored = await call(api.getOutcome, { token: actors.key, params: { id: r.json.records[0].id } });
    expect(stored.json.tool.annotations).toEqual(body.tool.annotations);
  });
});

// ── Sizes ───────────────────────────────────────────────────────────────────────────────────

const ofLength = (n: number) => (uniq('s') + 'x'.repeat(n)).slice(0, n);

describe('strings at, just over and far over their ceilings', () => {
  for (const t of targets) {
    it(t.name, async () => {
      for (const [path, max] of Object.entries(t.max).filter(([p]) => fieldsOf(t).includes(p))) {
        await unchanged(async () => {
          for (const n of [max + 1, 300_000])
            expectProblem(await t.send(setAt(t.body(), path, ofLength(n))), [422], path);
          expectProblem(await t.send(setAt(t.body(), path, ofLength(1024 * 1024))), [413]);
        });
        // At the ceiling: accepted (decisions and revocations each need a request of their own).
        if (t === decisions) fixed.pending = (await newApproval(actors)).id;
        if (t === revocations) fixed.revocable = (await newApproval(actors)).id;
        t.accepted(await t.send(setAt(t.body(), path, ofLength(max))));
      }
    });
  }

  it('records: 0, 1001 or 300,000 of them refused whole; 1000 accepted', async () => {
    await unchanged(async () => {
      for (const records of [[], Array.from({ length: 1001 }, fullRecord), Array(300_000).fill(1)]) {
        expectProblem(await outcomes.send({ records }), [422], 'records');
      }
    });
    const r = await outcomes.send({ records: Array.from({ length: 1000 }, fullRecord) });
    expectOk(r, [200]);
    expect(r.json.accepted).toBe(1000);
  });

  it('numbers out of range, fractional or beyond a double: 422 naming the field', async () => {
    await unchanged(async () => {
      for (const [path, n] of [
        ['durationMs', 2 ** 31],
        ['durationMs', -1],
        ['durationMs', 1.5],
        ['attempt', 0],
        ['observed.httpStatus', 600],
        ['observed.jsonRpcErrorCode', 0.5],
      ] as const) {
        expectProblem(await outcomes.send({ records: [setAt(fullRecord(), path, n)] }), [422], R + path);
      }
      // 1e400 parses as Infinity: not a number a record can hold.
      expectProblem(
        await outcomes.send(
          JSON.stringify({ records: [setAt(fullRecord(), 'durationMs', 7)] }).replace(
            '"durationMs":7',
            '"durationMs":1e400',
          ),
        ),
        [422],
        `${R}durationMs`,
      );
      expectProblem(await approvals.send({ ...approvalBody(), grantTtlSeconds: 86_401 }), [422], 'grantTtlSeconds');
    });
  });
});

// ── Unicode ─────────────────────────────────────────────────────────────────────────────────

/** Where a string field of each body is read back, and how it is stored. */
async function readBack(t: Target, r: Reply, path: string): Promise<unknown> {
  if (t === outcomes) {
    const stored = await call(api.getOutcome, { token: actors.key, params: { id: r.json.records[0].id } });
    return getAt(stored.json, path.slice(R.length));
  }
  const stored = await call(api.getApproval, { token: actors.key, params: { id: r.json.id } });
  if (t === decisions) return stored.json.decisions[0].reason;
  if (t === revocations) return stored.json.revoked.reason;
  return getAt(stored.json, path);
}

describe('unicode edge cases in every string field', () => {
  const fields = [outcomes, approvals, decisions, revocations].flatMap((t) =>
    fieldsOf(t)
      .filter((p) => typeof getAt(t.body(), p) === 'string' && t.max[p] !== undefined)
      .map((path) => ({ t, path })),
  );

  it('NUL or a lone surrogate: 422 naming the field; anything else stored exactly as sent (free text masked)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), hostileText, async ({ t, path }, hostile) => {
        // An event id is unique per key: the same one with other content would be refused as reused.
        const text = path.endsWith('eventId') ? hostile + uniq('') : hostile;
        if (t === decisions) fixed.pending = (await newApproval(actors)).id;
        if (t === revocations) fixed.revocable = (await newApproval(actors)).id;
        const trimmed = t === decisions || t === revocations ? text.trim() : text;
        if (unstorable(text) || trimmed === '' || trimmed.length > t.max[path]) {
          await unchanged(async () => expectProblem(await t.send(setAt(t.body(), path, text)), [422], path));
          return;
        }
        const r = await t.send(setAt(t.body(), path, text));
        t.accepted(r);
        if (path.endsWith('sessionId')) return; // stored only as a keyed hash
        expect(await readBack(t, r, path)).toBe(t.masked.includes(path) ? maskText(trimmed).text : trimmed);
      }),
      { numRuns: 120 },
    );
  });

  it('the same for each unstorable character in each field, deterministically', async () => {
    await unchanged(async () => {
      for (const { t, path } of fields) {
        for (const bad of UNSTORABLE) expectProblem(await t.send(setAt(t.body(), path, `ok ${bad} ok`)), [422], path);
      }
    });
  });

  it('an unknown key of annotations with a lone surrogate in its name is dropped like any other', async () => {
    const r = await outcomes.send(
      `{"records":[${JSON.stringify(fullRecord()).replace('"readOnlyHint"', '"\\ud800":1,"readOnlyHint"')}]}`,
    );
    expectOk(r, [200]);
  });
});

// ── Prototype keys ──────────────────────────────────────────────────────────────────────────

describe('__proto__, constructor and prototype keys at every level', () => {
  const POISON = { polluted: 'yes', constructor: { prototype: { polluted: 'yes' } }, __proto__x: 1 };
  const objectPaths = (t: Target) => ['', ...fieldsOf(t).filter((p) => jsonType(getAt(t.body(), p)) === 'object')];

  for (const t of targets) {
    it(t.name, async () => {
      const own = Object.getOwnPropertyNames(Object.prototype).sort();
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...objectPaths(t)),
          fc.constantFrom('__proto__', 'constructor', 'prototype'),
          fc.oneof(fc.constant(POISON), fc.jsonValue({ maxDepth: 3 })),
          async (at, key, value) => {
            const before = await stateFingerprint();
            const r = await t.send(JSON.stringify(setAt(t.body(), at ? `${at}.${key}` : key, value)));
            if (t.lenient.includes(at)) {
              t.accepted(r);
            } else {
              expectProblem(r, [422], at ? `${at}.${key}` : key);
              expect(await stateFingerprint()).toBe(before);
            }
            expect(({} as Record<string, unknown>).polluted).toBeUndefined();
            expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(own);
          },
        ),
        { numRuns: 3 * objectPaths(t).length + 6 },
      );
    });
  }
});

// ── Transport ───────────────────────────────────────────────────────────────────────────────

const stream = (chunks: number, size: number) => {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < chunks) controller.enqueue(new TextEncoder().encode('x'.repeat(size)));
      else controller.close();
    },
  });
};

describe('bodies that are not what they claim', () => {
  it('over 1 MiB: 413, declared or streamed without a length', async () => {
    await unchanged(async () => {
      for (const t of targets) {
        expectProblem(await t.send('{}', { headers: { 'content-length': String(1024 * 1024 + 1) } }), [413]);
        expectProblem(await t.send(stream(40, 32 * 1024)), [413]);
      }
    });
  });

  it('empty, truncated, not JSON, a BOM, trailing text: 400; JSON of the wrong shape: 422 on the body', async () => {
    await unchanged(async () => {
      for (const t of targets) {
        for (const text of ['', ' ', '{', '{"a":1', '\ufeff{}', '{} x', "{'a':1}", 'NaN', '[1,]', '{"a":1}\u0000']) {
          expectProblem(await t.send(text), [400]);
        }
        for (const json of ['null', '[]', '"text"', '1', 'true']) expectProblem(await t.send(json), [422], '(body)');
      }
    });
  });

  it('bytes that are not UTF-8: 400, not silently replaced', async () => {
    await unchanged(async () => {
      const valid = new TextEncoder().encode(JSON.stringify({ records: [fullRecord()] }));
      for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
        const at = JSON.stringify({ records: [fullRecord()] }).indexOf('Refund 40'); // inside the summary (ASCII before it)
        const bytes = new Uint8Array([...valid.slice(0, at), ...bad, ...valid.slice(at)]);
        expectProblem(await outcomes.send(bytes), [400]);
      }
    });
  });

  it('Idempotency-Key with spaces, non-ASCII or over 255 characters: 422 naming the header', async () => {
    await unchanged(async () => {
      for (const key of ['a b', 'cl\u00e9', 'x'.repeat(256), 'tab\tinside']) {
        expectProblem(
          await approvals.send(approvalBody(), { headers: { 'idempotency-key': key } }),
          [422],
          'Idempotency-Key',
        );
      }
      for (const key of [' ', '\u00a0'])
        expectProblem(await approvals.send(approvalBody(), { headers: { 'idempotency-key': key } }), [400]);
    });
  });

  it('after all of this, a valid body of each kind is still accepted', async () => {
    fixed.pending = (await newApproval(actors)).id;
    fixed.revocable = (await newApproval(actors)).id;
    for (const t of targets) if (t !== redemptions) t.accepted(await t.send(t.body()));
    expectOk(await redemptions.send(redeemBody()), [200]);
  });
});
