// Hostile bodies for every /api/v1 route that takes one: unicode edge
// cases and broken transports (sizes, bytes, JSON that is not JSON, odd Idempotency-Keys). Each
// refusal is a problem+json 4xx naming what is at fault, writes nothing, and the process answers
// normally after. The targets are in testing/hostile-targets.ts.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem, type Reply } from '@/testing/api-harness';
import { approvalBody, fullRecord, newApproval, redeemBody } from '@/testing/api-bodies';
import { getAt, hostileText, setAt, unstorable, UNSTORABLE } from '@/testing/hostile-values';
import { maskText } from '@/lib/redaction/mask';
import { uniq } from '@/testing/factories';
import {
  actors,
  Target,
  fixed,
  R,
  outcomes,
  approvals,
  decisions,
  revocations,
  redemptions,
  targets,
  fieldsOf,
  evaluations,
  toolAccepts,
  MIB,
  unchanged,
  setUpTargets,
  expectHeld,
} from '@/testing/hostile-targets';

// Cookie sessions are not used here (every call carries a bearer credential), and next-auth does
// not load outside Next: the session reader answers "no session".
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

beforeAll(setUpTargets);

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

  it('the catalog: NUL or a lone surrogate in a name: 422 naming it; in what a server wrote (a text, a schema): that tool held', async () => {
    await unchanged(async () => {
      for (const t of [evaluations, toolAccepts]) {
        for (const path of fieldsOf(t).filter((p) => typeof getAt(t.body(), p) === 'string')) {
          for (const bad of UNSTORABLE) {
            const r = await t.send(setAt(t.body(), path, `ok ${bad} ok`));
            if (t.held?.includes(path)) expectHeld(r);
            else expectProblem(r, [422], path);
          }
        }
      }
      for (const bad of UNSTORABLE) {
        const schema = { type: 'object', properties: { [`k${bad}`]: { type: 'string', description: bad } } };
        expectHeld(await evaluations.send(setAt(evaluations.body(), 'tools.0.inputSchema', schema)));
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
  it('over 1 MiB (8 MiB for policy/evaluate): 413, declared or streamed without a length', async () => {
    await unchanged(async () => {
      for (const t of targets) {
        const max = t.maxBytes ?? MIB;
        expectProblem(await t.send('{}', { headers: { 'content-length': String(max + 1) } }), [413]);
        expectProblem(await t.send(stream(max / (32 * 1024) + 8, 32 * 1024)), [413]);
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
