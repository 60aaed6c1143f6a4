// Hostile bodies for every /api/v1 route that takes one: a value of the
// wrong type in any field. Each refusal is a problem+json 4xx from docs/api.md's list naming the field at
// fault, writes nothing, and the process answers normally after. The route handlers run in-process
// with real Requests on a real database; fast-check varies the values with a moderate number of runs
// so the file stays well under a minute. The targets are in testing/hostile-targets.ts.
import fc from 'fast-check';
import { beforeAll, describe, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem } from '@/testing/api-harness';
import { newApproval } from '@/testing/api-bodies';
import { getAt, jsonType, type JsonType, setAt } from '@/testing/hostile-values';
import {
  actors,
  R,
  outcomes,
  approvals,
  decisions,
  revocations,
  redemptions,
  trust,
  evaluations,
  toolAccepts,
  targets,
  fieldsOf,
  unchanged,
  setUpTargets,
} from '@/testing/hostile-targets';

// Cookie sessions are not used here (every call carries a bearer credential), and next-auth does
// not load outside Next: the session reader answers "no session".
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

beforeAll(setUpTargets);

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
          'arguments',
          'summary',
          'resource.type',
          'resource.id',
        ],
      ],
      [decisions, ['decision', 'reason', 'version']],
      [revocations, ['reason']],
      [redemptions, ['server', 'tool', 'argsDigest']],
      [trust, ['name']],
      [evaluations, ['server', 'tools', 'tools.0.name']],
      [toolAccepts, ['server', 'tool', 'definitionHash']],
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
