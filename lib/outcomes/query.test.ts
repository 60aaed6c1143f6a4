import { describe, expect, it } from 'vitest';
import { decodeOutcomeCursor, encodeOutcomeCursor, OUTCOME_PAGE_MAX, outcomeQuerySchema } from './query';
import { outcomeContent } from './content';
import { outcomeSchema } from './schemas';

const ID = '0b9f3f2e-6f1a-4c4e-9d7b-2f6c1a0e9b11';
const cursor = encodeOutcomeCursor({ occurredAt: new Date('2026-11-30T12:00:00.123Z'), id: ID });

const pathsOf = (q: Record<string, unknown>) => {
  const parsed = outcomeQuerySchema.safeParse(q);
  return parsed.success ? [] : parsed.error.issues.map((i) => i.path.join('.'));
};

describe('outcomeQuerySchema', () => {
  it('parses every filter into typed values', () => {
    expect(
      outcomeQuerySchema.parse({
        requestRef: 'req_1',
        delivery: 'unknown',
        category: 'timeout',
        boundary: 'client',
        retry: 'backoff',
        tool: 'refund_payment',
        server: 'billing-mcp',
        organization: 'acme',
        principal: 'user_193',
        idempotencyKey: 'k',
        grantId: 'grt_1',
        from: '2026-11-30T12:00:00+02:00',
        to: '2026-12-01T00:00:00Z',
        cursor,
        limit: '200',
        readOnly: 'false',
      }),
    ).toEqual({
      requestRef: 'req_1',
      delivery: 'unknown',
      category: 'timeout',
      boundary: 'client',
      retry: 'backoff',
      tool: 'refund_payment',
      server: 'billing-mcp',
      organization: 'acme',
      principal: 'user_193',
      idempotencyKey: 'k',
      grantId: 'grt_1',
      from: new Date('2026-11-30T10:00:00Z'),
      to: new Date('2026-12-01T00:00:00Z'),
      cursor: { occurredAt: new Date('2026-11-30T12:00:00.123Z'), id: ID },
      limit: 200,
      readOnly: false,
    });
  });

  it('treats empty parameters as absent', () => {
    expect(outcomeQuerySchema.parse({ delivery: '', limit: '', cursor: '', from: '' })).toEqual({});
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown delivery', { delivery: 'lost' }, 'delivery'],
    ['an unknown category', { category: 'oops' }, 'category'],
    ['an unknown boundary', { boundary: 'edge' }, 'boundary'],
    ['an unknown retry', { retry: 'maybe' }, 'retry'],
    ['readOnly other than true or false', { readOnly: 'yes' }, 'readOnly'],
    ['a date that is not RFC 3339', { from: '30/11/2026' }, 'from'],
    ['a time without offset', { to: '2026-11-30T12:00:00' }, 'to'],
    ['an impossible date', { from: '2026-02-30T00:00:00Z' }, 'from'],
    ['year 0000', { from: '0000-01-01T00:00:00Z' }, 'from'],
    ['to before from', { from: '2026-12-01T00:00:00Z', to: '2026-11-30T00:00:00Z' }, 'to'],
    ['a forged cursor', { cursor: 'not-a-cursor' }, 'cursor'],
    ['a cursor with a bad id', { cursor: btoa(JSON.stringify(['2026-11-30T12:00:00.000Z', 'x'])) }, 'cursor'],
    ['limit 0', { limit: '0' }, 'limit'],
    [`limit ${OUTCOME_PAGE_MAX + 1}`, { limit: String(OUTCOME_PAGE_MAX + 1) }, 'limit'],
    ['a fractional limit', { limit: '2.5' }, 'limit'],
    ['a limit that is no number', { limit: 'ten' }, 'limit'],
    ['a repeated parameter', { delivery: ['unknown', 'rejected'] }, 'delivery'],
    ['a NUL in a filter', { requestRef: 'req\u0000' }, 'requestRef'],
    ['an over-long filter', { tool: 't'.repeat(201) }, 'tool'],
  ])('refuses %s, naming the field', (_name, q, path) => {
    expect(pathsOf(q)).toEqual([path]);
  });

  it('refuses unknown parameters rather than ignoring a misspelt filter', () => {
    expect(outcomeQuerySchema.safeParse({ reqRef: 'req_1' }).success).toBe(false);
  });
});

describe('outcome cursors', () => {
  it('round-trip and are URL-safe', () => {
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeOutcomeCursor(cursor)).toEqual({ occurredAt: new Date('2026-11-30T12:00:00.123Z'), id: ID });
  });

  it.each([
    '',
    '!!!',
    btoa('[]'),
    btoa('{"a":1}'),
    btoa(JSON.stringify(['yesterday', ID])),
    btoa(JSON.stringify(['2026-11-30T12:00:00Z', ID])),
  ])('decodes %j to null', (raw) => {
    expect(decodeOutcomeCursor(raw)).toBeNull();
  });
});

describe('outcomeContent', () => {
  const base = outcomeSchema.parse({
    eventId: 'evt_1',
    occurredAt: '2026-11-30T12:00:00Z',
    requestRef: 'req_1',
    organization: 'acme',
    principal: 'user_193',
    server: 'billing-mcp',
    tool: { name: 'refund_payment' },
    observed: { sent: true, httpStatus: 200 },
  });

  it('ignores key order and null versus absent', () => {
    const reordered = outcomeSchema.parse(
      Object.fromEntries(Object.entries({ ...base, agent: null, summary: null }).reverse()),
    );
    expect(outcomeContent(reordered)).toBe(outcomeContent(base));
  });

  it('sees any change of value', () => {
    for (const change of [
      { summary: 'x' },
      { attempt: 2 },
      { observed: { sent: true, httpStatus: 500 } },
      { tool: { name: 'refund_payment', annotations: { readOnlyHint: true } } },
    ]) {
      expect(outcomeContent(outcomeSchema.parse({ ...base, ...change }))).not.toBe(outcomeContent(base));
    }
  });
});
