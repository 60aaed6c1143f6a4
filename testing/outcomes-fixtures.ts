// Shared setup of the outcome-record tests (lib/server/outcomes/*.test.ts): keys, records,
// batches, a way to make calls really race, and planted secrets of every kind.
import pg from 'pg';
import { uniq } from './factories';
import { db } from '@/lib/server/db/db';
import type { ApiScope } from '@/lib/credentials/scopes';
import { outcomeQuerySchema, type OutcomeQuery } from '@/lib/outcomes/query';
import { outcomeBatchSchema, type Observed, type Outcome } from '@/lib/outcomes/schemas';
import { type MaskKind } from '@/lib/redaction/mask';
import { makeApiKey } from './factories';
export { value } from './factories';

// ── factories ───────────────────────────────────────────────────────────────────────────────

export const OK: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };

export function makeRecord(over: Partial<Outcome> = {}): Outcome {
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
export const batchOf = (...records: unknown[]) => outcomeBatchSchema.parse({ records });

export const query = (q: Record<string, unknown>): OutcomeQuery => outcomeQuerySchema.parse(q);
export const countFor = (requestRef: string) => db.outcomeRecord.count({ where: { requestRef } });

// Everything stored for these records, as text: what a database dump would show.
export async function tableText(requestRef: string): Promise<string> {
  const rows = await db.$queryRaw<
    { row: string }[]
  >`SELECT row_to_json(o)::text AS row FROM outcome_records o WHERE request_ref = ${requestRef}`;
  return rows.map((r) => r.row).join('\n');
}

/**
 * Starts `run` while another session holds a lock that stops every insert into outcome_records,
 * and releases it only once `waiters` inserts are queued behind it: they then really race.
 */
export async function racing<T>(waiters: number, run: () => Promise<T>): Promise<T> {
  const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE outcome_records IN SHARE MODE');
    const result = run();
    for (let waited = 0; ; waited += 20) {
      const { rows } = await blocker.query<{ n: number }>(
        // pg_locks is the whole server's, and databases copied from one template share table oids.
        `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'outcome_records'::regclass
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
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
export const t = (...parts: string[]) => parts.join('');
export const PLANTED: [MaskKind, string, string][] = [
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

export const makeKey = (scopes: ApiScope[] = ['outcomes:write', 'outcomes:read'], organization?: string) =>
  makeApiKey(scopes, organization);
