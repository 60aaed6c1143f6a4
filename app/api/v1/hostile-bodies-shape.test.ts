// Hostile bodies for every /api/v1 route that takes one: deep nesting,
// sizes at, just over and far over each limit, and prototype keys at every level. Each refusal is a
// problem+json 4xx from docs/api.md's list naming the field at fault, writes nothing, and the process
// answers normally after. The targets are in testing/hostile-targets.ts.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem } from '@/testing/api-harness';
import { approvalBody, fullRecord, newApproval } from '@/testing/api-bodies';
import { getAt, jsonType, setAt } from '@/testing/hostile-values';
import { uniq } from '@/testing/factories';
import { stateFingerprint } from '@/testing/state';
import {
  actors,
  Target,
  fixed,
  R,
  outcomes,
  approvals,
  decisions,
  revocations,
  targets,
  fieldsOf,
  MIB,
  unchanged,
  setUpTargets,
  expectHeld,
} from '@/testing/hostile-targets';

// Cookie sessions are not used here (every call carries a bearer credential), and next-auth does
// not load outside Next: the session reader answers "no session".
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

beforeAll(setUpTargets);

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
          // A server's schema nested too deep holds its tool (an array is no schema: refused).
          if (t.kept?.includes(path) && t.held?.includes(path) && deep === deepObject) {
            expectHeld(await t.send(text));
            continue;
          }
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
          for (const n of [max + 1, 300_000]) {
            const r = await t.send(setAt(t.body(), path, ofLength(n)));
            if (t.held?.includes(path)) expectHeld(r);
            else expectProblem(r, [422], path);
          }
          expectProblem(await t.send(setAt(t.body(), path, ofLength(t.maxBytes ?? MIB))), [413]);
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
            if (t.lenient.includes(at) || t.kept?.includes(at)) {
              t.accepted(r);
            } else {
              expectProblem(r, [422], t.opaque?.includes(at) ? at : at ? `${at}.${key}` : key);
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
