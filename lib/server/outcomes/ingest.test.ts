import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getOutcome, ingestOutcomes, listOutcomes } from '.';
import { trustServer } from '../policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { db } from '../db/db';
import { OutcomeBoundary, OutcomeCategory, OutcomeDelivery, OutcomeRetry } from '@/lib/generated/prisma/enums';
import { classifyRecord } from '@/lib/outcomes/classify';
import { boundaries, categories, deliveries, retryValues, type Observed } from '@/lib/outcomes/schemas';
import { maskText } from '@/lib/redaction/mask';
import { makeKey, OK, makeRecord, batchOf, value, countFor, tableText, t, PLANTED } from '@/testing/outcomes-fixtures';
import { cli } from '@/lib/auth/actor';

describe('outcome records: data model', () => {
  it('stores the same enum values the wire schema names', () => {
    expect(Object.values(OutcomeBoundary)).toEqual([...boundaries]);
    expect(Object.values(OutcomeDelivery)).toEqual([...deliveries]);
    expect(Object.values(OutcomeCategory)).toEqual([...categories]);
    expect(Object.values(OutcomeRetry)).toEqual([...retryValues]);
  });
});

describe('ingestOutcomes (real PostgreSQL)', () => {
  it('answers per docs/api.md and stores the classification the shared classifier gives', async () => {
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
    const row = await db.outcomeRecord.findFirstOrThrow({ where: { id: res.records[0].id } });
    expect(row).toMatchObject({
      apiKeyId: key.kind === 'apiKey' && key.keyId,
      classifierVersion: 3,
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
});
