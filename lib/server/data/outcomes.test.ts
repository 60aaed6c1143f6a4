import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { getOutcome, ingestOutcomes, listOutcomes, type OutcomeView } from './outcomes';
import { createApiKey, type ApiClient } from './credentials';
import { trustServer } from './trusted-servers';
import { makeUser, uniq } from '../../../testing/factories';
import { db } from './db';
import { OutcomeBoundary, OutcomeCategory, OutcomeDelivery, OutcomeRetry } from '@/lib/generated/prisma/enums';
import type { ApiScope } from '@/lib/credentials/scopes';
import { classifyRecord } from '@/lib/outcomes/classify';
import { outcomeQuerySchema, type OutcomeQuery } from '@/lib/outcomes/query';
import {
  boundaries,
  categories,
  deliveries,
  outcomeBatchSchema,
  retryValues,
  type Observed,
  type Outcome,
} from '@/lib/outcomes/schemas';
import { maskText, type MaskKind } from '@/lib/redaction/mask';
import type { Result } from '@/lib/result';
import { cli } from '@/lib/auth/actor';

// ── factories ───────────────────────────────────────────────────────────────────────────────

async function makeKey(
  scopes: ApiScope[] = ['outcomes:write', 'outcomes:read'],
  organization?: string,
): Promise<ApiClient> {
  const created = await createApiKey(cli, { name: uniq('key'), scopes, organization });
  if (!created.ok) throw new Error(created.failure);
  const { id, name, organization: org } = created.value.key;
  return { kind: 'apiKey', keyId: id, name, scopes, organization: org };
}

const OK: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };

function makeRecord(over: Partial<Outcome> = {}): Outcome {
  return {
    eventId: uniq('evt'),
    occurredAt: '2026-11-30T12:00:00Z',
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    server: 'billing-mcp',
    tool: { name: 'refund_payment' },
    observed: OK,
    ...over,
  };
}

/** Through the wire schema, as the route does: what ingestOutcomes really receives. */
const batchOf = (...records: unknown[]) => outcomeBatchSchema.parse({ records });

function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.failure}: ${result.detail ?? ''} ${JSON.stringify(result.errors ?? [])}`);
  return result.value;
}

const query = (q: Record<string, unknown>): OutcomeQuery => outcomeQuerySchema.parse(q);
const countFor = (requestRef: string) => db.outcomeRecord.count({ where: { requestRef } });

// Everything stored for these records, as text: what a database dump would show.
async function tableText(requestRef: string): Promise<string> {
  const rows = await db.$queryRaw<
    { row: string }[]
  >`SELECT row_to_json(o)::text AS row FROM outcome_records o WHERE request_ref = ${requestRef}`;
  return rows.map((r) => r.row).join('\n');
}

/**
 * Starts `run` while another session holds a lock that stops every insert into outcome_records,
 * and releases it only once `waiters` inserts are queued behind it: they then really race.
 */
async function racing<T>(waiters: number, run: () => Promise<T>): Promise<T> {
  const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE outcome_records IN SHARE MODE');
    const result = run();
    for (let waited = 0; ; waited += 20) {
      const { rows } = await blocker.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'outcome_records'::regclass",
      );
      if (rows[0].n >= waiters) break;
      if (waited > 20_000) throw new Error(`only ${rows[0].n} of ${waiters} inserts queued`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await blocker.query('COMMIT');
    return await result;
  } finally {
    await blocker.end();
  }
}

// Vendor-shaped tokens are assembled at run time so the source holds nothing a scanner takes
// for a live credential. [kind, text planted in the summary, the part that must never come back]
const t = (...parts: string[]) => parts.join('');
const PLANTED: [MaskKind, string, string][] = [
  [
    'private_key',
    t('key -----BEGIN ', 'RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq0Yx1vPp3Lw9Q2\n-----END RSA PRIVATE KEY-----'),
    'MIIEowIBAAKCAQEA7bq0Yx1vPp3Lw9Q2',
  ],
  [
    'jwt',
    t('token eyJhbGciOiJIUzI1NiJ9', '.eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'),
    'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  ],
  ['aws_key', t('key ', 'AKIA', 'IOSFODNN7EXAMPLE'), t('AKIA', 'IOSFODNN7EXAMPLE')],
  ['github_token', t('use ', 'ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'), 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'],
  ['slack_token', t('xoxb', '-1234567890-0987654321-AbCdEfGhIj'), '1234567890-0987654321-AbCdEfGhIj'],
  ['stripe_key', t('stripe ', 'sk_live_', '4eC39HqLyjWDarjtT1zdp7dc'), '4eC39HqLyjWDarjtT1zdp7dc'],
  ['google_api_key', t('key=', 'AIza', 'Sy3x'.repeat(8), 'a-_'), t('Sy3x'.repeat(8), 'a-_')],
  ['api_key', t('key ', 'cs_live_', '9f8e7d6c5b4a3f2e'), '9f8e7d6c5b4a3f2e'],
  ['bearer_token', 'Authorization: Bearer abc123def456ghi789', 'abc123def456ghi789'],
  ['secret', 'password=s3cr3t!Pw', 's3cr3t!Pw'],
  ['email', 'mail jane.doe+billing@example.co.uk now', 'jane.doe+billing@example.co.uk'],
  ['card_number', 'card 4111 1111 1111 1111 charged', '4111 1111 1111 1111'],
  ['ssn', 'ssn 123-45-6789 on file', '123-45-6789'],
  ['phone', 'call +44 20 7946 0958 today', '7946 0958'],
];

// ── tests ───────────────────────────────────────────────────────────────────────────────────

describe('outcome records: data model', () => {
  it('stores the same enum values the wire schema names', () => {
    expect(Object.values(OutcomeBoundary)).toEqual([...boundaries]);
    expect(Object.values(OutcomeDelivery)).toEqual([...deliveries]);
    expect(Object.values(OutcomeCategory)).toEqual([...categories]);
    expect(Object.values(OutcomeRetry)).toEqual([...retryValues]);
  });
});

describe('ingestOutcomes (real PostgreSQL)', () => {
  it('answers per API.md and stores the classification the shared classifier gives', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const observations: Observed[] = [
      OK,
      { sent: false, clientBlock: 'approval_required' },
      { sent: true, httpStatus: 401, authError: 'invalid_token' },
      { sent: true, httpStatus: 503 },
      { sent: true, httpStatus: 502 },
      { sent: true, jsonRpcErrorCode: -32602, result: { isError: true, errorCategory: null } },
      { sent: true, clientError: 'timeout' },
      { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'REVISION_CONFLICT' } },
      { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'missing' } },
      { sent: true },
    ];
    const batch = batchOf(...observations.map((observed) => makeRecord({ requestRef, observed })));
    const res = value(await ingestOutcomes(key, batch));
    expect(Object.keys(res).sort()).toEqual(['accepted', 'duplicates', 'records']);
    expect(res).toMatchObject({ accepted: observations.length, duplicates: 0 });
    for (const [i, r] of res.records.entries()) {
      const expected = classifyRecord(batch.records[i], false);
      expect(Object.keys(r).sort()).toEqual(['classification', 'eventId', 'id']);
      expect(r.eventId).toBe(batch.records[i].eventId);
      expect(r.classification).toEqual(expected);
      expect(value(await getOutcome(key, r.id)).classification).toEqual(expected);
    }
    const row = await db.outcomeRecord.findUniqueOrThrow({ where: { id: res.records[0].id } });
    expect(row).toMatchObject({
      apiKeyId: key.kind === 'apiKey' && key.keyId,
      classifierVersion: 1,
      annotationsTrusted: false,
    });
    expect(row.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('believes annotations only from trusted servers', async () => {
    const key = await makeKey();
    const trusted = uniq('trusted-mcp');
    await trustServer(cli, trusted);
    const readOnly = { name: 'get_balance', annotations: { readOnlyHint: true } };
    const failed: Observed = { sent: true, httpStatus: 500 };
    const requestRef = uniq('req');
    const batch = batchOf(
      makeRecord({ requestRef, server: trusted, tool: readOnly, observed: failed }),
      makeRecord({ requestRef, server: uniq('untrusted-mcp'), tool: readOnly, observed: failed }),
    );
    const [onTrusted, onUntrusted] = value(await ingestOutcomes(key, batch)).records;
    expect(onTrusted.classification).toMatchObject({ delivery: 'rejected', readOnly: true, retry: 'backoff' });
    expect(onTrusted.classification).toEqual(classifyRecord(batch.records[0], true));
    expect(onUntrusted.classification).toMatchObject({
      delivery: 'unknown',
      readOnly: false,
      retry: 'after_state_check',
    });
    expect(onUntrusted.classification).toEqual(classifyRecord(batch.records[1], false));
    expect(value(await getOutcome(key, onTrusted.id))).toMatchObject({ annotationsTrusted: true, tool: readOnly });
    expect(value(await getOutcome(key, onUntrusted.id))).toMatchObject({ annotationsTrusted: false, tool: readOnly });
  });

  it('masks every kind of secret and personal data before the row is written', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    for (const [kind, text] of PLANTED) expect(maskText(text).kinds, kind).toContain(kind);
    const records = PLANTED.map(([, text]) => makeRecord({ requestRef, summary: `Refund 40.00 EUR; ${text}` }));
    // Other free text too: the agent name, the tool's title, a string request id, a declared category.
    records.push(
      makeRecord({
        requestRef,
        agent: 'bot for jane.doe+billing@example.co.uk',
        tool: { name: 'refund_payment', annotations: { title: 'Refund for 123-45-6789' } },
        mcpRequestId: t('req-', 'ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'),
        observed: { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'password=s3cr3t!Pw' } },
      }),
    );
    const res = value(await ingestOutcomes(key, batchOf(...records)));

    const listed = value(await listOutcomes(key, { requestRef, limit: 200 }));
    const fetched = await Promise.all(res.records.map(async (r) => value(await getOutcome(key, r.id))));
    const shown = JSON.stringify([listed, fetched]);
    const stored = await tableText(requestRef);
    expect(listed.items).toHaveLength(records.length);
    for (const [kind, , secret] of PLANTED) {
      expect(shown, kind).not.toContain(secret);
      expect(stored, kind).not.toContain(secret);
      expect(shown, kind).toContain(`[masked:${kind}]`);
    }
    expect(listed.items.map((i) => i.summary)).toContain('Refund 40.00 EUR; ssn [masked:ssn] on file');
    const other = fetched.at(-1)!;
    expect(other.agent).toBe('bot for [masked:email]');
    expect(other.tool.annotations?.title).toBe('Refund for [masked:ssn]');
    expect(other.mcpRequestId).toBe('req-[masked:github_token]');
    expect(other.observed.result?.errorCategory).toBe('password=[masked:secret]');
  });

  it('keeps the session id only as a keyed hash and never shows hashes', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const sessionId = uniq('session');
    const res = value(
      await ingestOutcomes(
        key,
        batchOf(
          makeRecord({ requestRef, sessionId }),
          makeRecord({ requestRef, sessionId }),
          makeRecord({ requestRef, sessionId: uniq('other') }),
        ),
      ),
    );
    const rows = await db.outcomeRecord.findMany({
      where: { requestRef },
      orderBy: { receivedSeq: 'asc' },
      select: { sessionHash: true, contentHash: true },
    });
    expect(rows[0].sessionHash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].sessionHash).toBe(rows[1].sessionHash);
    expect(rows[2].sessionHash).not.toBe(rows[0].sessionHash);
    // Keyed: not the plain SHA-256 anyone could recompute from a guessed id.
    expect(rows[0].sessionHash).not.toBe(createHash('sha256').update(sessionId).digest('hex'));
    expect(await tableText(requestRef)).not.toContain(sessionId);
    const shown = JSON.stringify([
      value(await listOutcomes(key, { requestRef })),
      value(await getOutcome(key, res.records[0].id)),
    ]);
    for (const hidden of [
      sessionId,
      rows[0].sessionHash!,
      rows[0].contentHash,
      'sessionHash',
      'contentHash',
      'apiKeyId',
    ]) {
      expect(shown).not.toContain(hidden);
    }
  });

  it('a replay with the same content is a duplicate with the same answer; null and absent are the same', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const records = [
      makeRecord({ requestRef, summary: 'one' }),
      makeRecord({ requestRef, summary: 'two', agent: undefined }),
    ];
    const first = value(await ingestOutcomes(key, batchOf(...records)));
    expect(first).toMatchObject({ accepted: 2, duplicates: 0 });
    const again = value(
      await ingestOutcomes(key, batchOf(records[0], { ...records[1], agent: null, durationMs: null })),
    );
    expect(again).toEqual({ ...first, accepted: 0, duplicates: 2 });
    expect(await countFor(requestRef)).toBe(2);
  });

  it('a known eventId with other content is 422 naming the record, and nothing of the batch is written', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const stored = makeRecord({ requestRef, summary: 'Refund 40.00 EUR' });
    value(await ingestOutcomes(key, batchOf(stored)));
    const fresh = makeRecord({ requestRef });
    const res = await ingestOutcomes(key, batchOf(fresh, { ...stored, summary: 'Refund 400.00 EUR' }));
    expect(res).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
      errors: [{ path: 'records.1.eventId' }],
    });
    expect(await countFor(requestRef)).toBe(1);
    const row = await db.outcomeRecord.findFirstOrThrow({ where: { requestRef } });
    expect(row.summary).toBe('Refund 40.00 EUR');
  });

  it('event ids are unique per API key, not across keys', async () => {
    const [a, b] = [await makeKey(), await makeKey()];
    const record = makeRecord();
    const [ra, rb] = [value(await ingestOutcomes(a, batchOf(record))), value(await ingestOutcomes(b, batchOf(record)))];
    expect(ra.accepted).toBe(1);
    expect(rb.accepted).toBe(1);
    expect(ra.records[0].id).not.toBe(rb.records[0].id);
  });

  it('repeats inside one batch: the same content is stored once, other content is 422', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const record = makeRecord({ requestRef });
    const res = value(await ingestOutcomes(key, batchOf(record, makeRecord({ requestRef }), { ...record })));
    expect(res).toMatchObject({ accepted: 2, duplicates: 1 });
    expect(res.records[2].id).toBe(res.records[0].id);
    expect(await countFor(requestRef)).toBe(2);

    const other = uniq('req');
    const clash = makeRecord({ requestRef: other });
    const refused = await ingestOutcomes(
      key,
      batchOf(clash, makeRecord({ requestRef: other }), { ...clash, attempt: 2 }),
    );
    expect(refused).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
      errors: [{ path: 'records.2.eventId' }],
    });
    expect(await countFor(other)).toBe(0);
  });

  it('a lone record (stored without a transaction): replay, clash and a race each behave like a batch', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const record = makeRecord({ requestRef, summary: 'Refund 12.00 EUR' });
    const first = value(await ingestOutcomes(key, batchOf(record)));
    expect(first).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(value(await ingestOutcomes(key, batchOf(record)))).toEqual({ ...first, accepted: 0, duplicates: 1 });
    const clash = await ingestOutcomes(key, batchOf({ ...record, summary: 'Refund 120.00 EUR' }));
    expect(clash).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
      errors: [{ path: 'records.0.eventId' }],
    });
    expect((await db.outcomeRecord.findFirstOrThrow({ where: { requestRef } })).summary).toBe('Refund 12.00 EUR');

    const raced = makeRecord({ requestRef });
    const results = (
      await racing(10, () => Promise.all(Array.from({ length: 10 }, () => ingestOutcomes(key, batchOf(raced)))))
    ).map(value);
    expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(1);
    expect(new Set(results.map((r) => r.records[0].id)).size).toBe(1);
    expect(await countFor(requestRef)).toBe(2);
  });

  it('a batch with one invalid record writes nothing', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const good = () => makeRecord({ requestRef });
    // Refused at the door, naming the field.
    const parsed = outcomeBatchSchema.safeParse({ records: [good(), { ...good(), occurredAt: 'yesterday' }, good()] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual(['records.1.occurredAt']);
    // And should one get past the schema, the database refuses the whole batch.
    const smuggled = { records: [good(), good(), { ...good(), occurredAt: '0000-01-01T00:00:00Z' }] };
    await expect(ingestOutcomes(key, smuggled)).rejects.toThrow();
    expect(await countFor(requestRef)).toBe(0);
  });

  it('10 concurrent identical batches store each record exactly once', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const batch = batchOf(...Array.from({ length: 50 }, () => makeRecord({ requestRef })));
    const results = (
      await racing(10, () => Promise.all(Array.from({ length: 10 }, () => ingestOutcomes(key, batch))))
    ).map(value);
    expect(await countFor(requestRef)).toBe(50);
    expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(50);
    for (const r of results) {
      expect(r.accepted + r.duplicates).toBe(50);
      expect(r.records.map((x) => x.id)).toEqual(results[0].records.map((x) => x.id));
    }
  });

  it('concurrent batches sharing records in opposite orders neither deadlock nor double-store', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const records = Array.from({ length: 200 }, () => makeRecord({ requestRef }));
    const forward = batchOf(...records);
    const backward = batchOf(...[...records].reverse());
    const results = await racing(6, () =>
      Promise.all(Array.from({ length: 6 }, (_, i) => ingestOutcomes(key, i % 2 ? backward : forward))),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await countFor(requestRef)).toBe(200);
  });

  it('receipt order follows the batch, whatever the event ids', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const batch = batchOf(
      ...['evt-c', 'evt-a', 'evt-b'].map((id) => makeRecord({ requestRef, eventId: `${id}-${requestRef}` })),
    );
    value(await ingestOutcomes(key, batch));
    const rows = await db.outcomeRecord.findMany({
      where: { requestRef },
      orderBy: { receivedSeq: 'asc' },
      select: { eventId: true },
    });
    expect(rows.map((r) => r.eventId)).toEqual(batch.records.map((r) => r.eventId));
  });

  it('accepts a 1000-record batch', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const batch = batchOf(
      ...Array.from({ length: 1000 }, (_, i) =>
        makeRecord({
          requestRef,
          summary: `Refund ${i}.00 EUR on order ${4000 + i} for jane${i}@example.com`,
          sessionId: uniq('s'),
          tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
        }),
      ),
    );
    const started = Date.now();
    const res = value(await ingestOutcomes(key, batch));
    expect(res).toMatchObject({ accepted: 1000, duplicates: 0 });
    expect(res.records).toHaveLength(1000);
    expect(await countFor(requestRef)).toBe(1000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('refuses people and keys without outcomes:write', async () => {
    const batch = batchOf(makeRecord());
    const admin = await makeUser('admin');
    expect(await ingestOutcomes({ ...admin, kind: 'user', tokenId: null }, batch)).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(await ingestOutcomes(await makeKey(['outcomes:read']), batch)).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
  });
});

describe('organization-limited keys', () => {
  it('write only their organization, naming the record otherwise, and store nothing then', async () => {
    const org = uniq('org');
    const key = await makeKey(['outcomes:write', 'outcomes:read'], org);
    const requestRef = uniq('req');
    const res = await ingestOutcomes(
      key,
      batchOf(makeRecord({ requestRef, organization: org }), makeRecord({ requestRef, organization: 'acme' })),
    );
    expect(res).toMatchObject({ ok: false, failure: 'forbidden', errors: [{ path: 'records.1.organization' }] });
    expect(!res.ok && res.detail).toContain('records.1');
    expect(await countFor(requestRef)).toBe(0);
    expect(value(await ingestOutcomes(key, batchOf(makeRecord({ requestRef, organization: org })))).accepted).toBe(1);
  });

  it('read only their organization, whatever the filter', async () => {
    const org = uniq('org');
    const limited = await makeKey(['outcomes:write', 'outcomes:read'], org);
    const unlimited = await makeKey();
    const requestRef = uniq('req');
    const own = value(await ingestOutcomes(limited, batchOf(makeRecord({ requestRef, organization: org })))).records[0];
    const foreign = value(await ingestOutcomes(unlimited, batchOf(makeRecord({ requestRef, organization: 'acme' }))))
      .records[0];

    const seen = value(await listOutcomes(limited, { requestRef }));
    expect(seen.items.map((i) => i.id)).toEqual([own.id]);
    expect(value(await listOutcomes(limited, { requestRef, organization: 'acme' })).items).toEqual([]);
    expect(value(await listOutcomes(limited, {})).items.every((i) => i.organization === org)).toBe(true);
    expect(await getOutcome(limited, foreign.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(value(await getOutcome(limited, own.id)).id).toBe(own.id);
    expect(value(await listOutcomes(unlimited, { requestRef })).items).toHaveLength(2);
  });
});

describe('listOutcomes and getOutcome', () => {
  it('pages newest first through equal timestamps without duplicates or gaps', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    // 23 records on 4 distinct instants: most pages end inside a run of equal occurredAt.
    const instants = [
      '2026-11-30T12:00:00Z',
      '2026-11-30T12:00:00.001Z',
      '2026-11-30T13:00:00+01:00',
      '2026-11-29T23:59:59.999Z',
    ];
    const batch = batchOf(
      ...Array.from({ length: 23 }, (_, i) => makeRecord({ requestRef, occurredAt: instants[i % 4] })),
    );
    const { records } = value(await ingestOutcomes(key, batch));
    const expected = records
      .map((r, i) => ({ id: r.id, at: Date.parse(batch.records[i].occurredAt) }))
      .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);

    for (const limit of [1, 4, 5, 23, 50]) {
      const ids: string[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const page = value(
          await listOutcomes(key, query({ requestRef, limit: String(limit), ...(cursor ? { cursor } : {}) })),
        );
        expect(page.items.length).toBeLessThanOrEqual(limit);
        ids.push(...page.items.map((i) => i.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 30);
      expect(ids, `limit ${limit}`).toEqual(expected);
      expect(pages).toBe(Math.max(1, Math.ceil(23 / limit)));
    }
  });

  it('defaults to 50 per page', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    value(await ingestOutcomes(key, batchOf(...Array.from({ length: 51 }, () => makeRecord({ requestRef })))));
    const page = value(await listOutcomes(key, query({ requestRef })));
    expect(page.items).toHaveLength(50);
    expect(page.nextCursor).toEqual(expect.any(String));
  });

  it('applies every filter', async () => {
    const key = await makeKey();
    const trusted = uniq('trusted');
    await trustServer(cli, trusted);
    const requestRef = uniq('req');
    const records = [
      makeRecord({
        requestRef,
        occurredAt: '2026-11-01T10:00:00Z',
        tool: { name: 'refund_payment' },
        server: 'billing-mcp',
        organization: 'acme',
        principal: 'p1',
        idempotencyKey: 'refund-1',
        grantId: 'grt_1',
      }),
      makeRecord({
        requestRef,
        occurredAt: '2026-11-02T10:00:00Z',
        tool: { name: 'get_order' },
        server: 'orders-mcp',
        organization: 'globex',
        principal: 'p2',
        observed: { sent: true, httpStatus: 403, authError: 'insufficient_scope' },
      }),
      makeRecord({
        requestRef,
        occurredAt: '2026-11-03T10:00:00Z',
        tool: { name: 'get_order', annotations: { readOnlyHint: true } },
        server: trusted,
        organization: 'acme',
        principal: 'p2',
        observed: { sent: true, clientError: 'timeout' },
      }),
      makeRecord({
        requestRef,
        occurredAt: '2026-11-04T10:00:00Z',
        tool: { name: 'refund_payment' },
        server: 'billing-mcp',
        organization: 'acme',
        principal: 'p1',
        observed: { sent: false, clientBlock: 'approval_required' },
      }),
    ];
    const ids = value(await ingestOutcomes(key, batchOf(...records))).records.map((r) => r.id);
    const cases: [Record<string, string>, number[]][] = [
      [{}, [3, 2, 1, 0]],
      [{ delivery: 'completed' }, [0]],
      [{ delivery: 'rejected' }, [1]],
      [{ delivery: 'unknown' }, [2]],
      [{ category: 'approval_required' }, [3]],
      [{ boundary: 'client' }, [3, 2]],
      [{ retry: 'backoff' }, [2]],
      [{ retry: 'after_approval' }, [3, 1]],
      [{ readOnly: 'true' }, [2]],
      [{ readOnly: 'false', delivery: 'completed' }, [0]],
      [{ tool: 'get_order' }, [2, 1]],
      [{ server: 'billing-mcp' }, [3, 0]],
      [{ organization: 'globex' }, [1]],
      [{ principal: 'p1' }, [3, 0]],
      [{ idempotencyKey: 'refund-1' }, [0]],
      [{ grantId: 'grt_1' }, [0]],
      [{ from: '2026-11-02T10:00:00Z' }, [3, 2, 1]],
      [{ to: '2026-11-03T10:00:00Z' }, [1, 0]],
      [{ from: '2026-11-02T00:00:00Z', to: '2026-11-04T00:00:00+02:00' }, [2, 1]],
      [{ tool: 'get_order', principal: 'p2', organization: 'acme' }, [2]],
      [{ delivery: 'never_sent', server: 'orders-mcp' }, []],
      [{ delivery: '' }, [3, 2, 1, 0]],
    ];
    for (const [filter, expected] of cases) {
      const page = value(await listOutcomes(key, query({ requestRef, ...filter })));
      expect(
        page.items.map((i) => i.id),
        JSON.stringify(filter),
      ).toEqual(expected.map((i) => ids[i]));
    }
    expect(value(await listOutcomes(key, query({ requestRef: uniq('none') }))).items).toEqual([]);
  });

  it('returns views with the API.md fields, no more', async () => {
    const key = await makeKey();
    const record = makeRecord({
      durationMs: 812,
      idempotencyKey: 'refund-4411-v1',
      attempt: 1,
      agent: 'support-bot',
      serverVersion: '2.3.0',
      protocolVersion: '2025-11-25',
      mcpRequestId: 17,
      sessionId: 'b7f1c2',
      grantId: 'grt_1',
      argsDigest: `sha256:${'ab'.repeat(32)}`,
      summary: 'Refund 40.00 EUR on order 4411',
      occurredAt: '2026-11-30T13:00:00+01:00',
      tool: {
        name: 'refund_payment',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      },
    });
    const { id } = value(await ingestOutcomes(key, batchOf(record))).records[0];
    const view: OutcomeView = value(await getOutcome(key, id));
    const { sessionId: _hidden, occurredAt: _at, ...sent } = record;
    expect(view).toEqual({
      ...sent,
      id,
      occurredAt: new Date('2026-11-30T12:00:00Z'),
      classification: classifyRecord(record, false),
      annotationsTrusted: false,
      receivedAt: expect.any(Date),
    });
  });

  it('people read with outcomes.read; keys need outcomes:read; unknown and malformed ids are not found', async () => {
    const key = await makeKey();
    const { id } = value(await ingestOutcomes(key, batchOf(makeRecord()))).records[0];
    const support = await makeUser('support');
    expect(value(await getOutcome(support, id)).id).toBe(id);
    expect(value(await getOutcome({ ...support, kind: 'user', tokenId: null }, id)).id).toBe(id);
    expect(value(await listOutcomes(support, {})).items.length).toBeGreaterThan(0);
    const writeOnly = await makeKey(['outcomes:write']);
    expect(await listOutcomes(writeOnly, {})).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await getOutcome(writeOnly, id)).toMatchObject({ ok: false, failure: 'forbidden' });
    for (const missing of ['00000000-0000-4000-8000-000000000000', 'nope', `${id}x`, "' OR 1=1 --", '']) {
      expect(await getOutcome(key, missing)).toMatchObject({ ok: false, failure: 'not_found' });
    }
  });
});
