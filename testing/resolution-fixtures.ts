// Shared by the tests of resolving an unknown (lib/server/outcomes/resolution.test.ts, by a later
// record; state-check.test.ts, by people): an operation's attempts, posted, and their resolution.
import { randomBytes } from 'node:crypto';
import { ingestOutcomes } from '@/lib/server/outcomes';
import { db } from '@/lib/server/db/db';
import { uniq } from './factories';
import { batchOf, makeRecord, value } from './outcomes-fixtures';
import type { Observed, Outcome } from '@/lib/outcomes/schemas';
import type { Actor } from '@/lib/auth/actor';

export const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };

export const digest = () => `sha256:${randomBytes(32).toString('hex')}`;

/** One operation's attempts: the same org, server, tool, key and digest unless overridden. */
export function operation() {
  const requestRef = uniq('req');
  const idempotencyKey = uniq('refund');
  const argsDigest = digest();
  return (minute: number, observed: Observed, over: Partial<Outcome> = {}) =>
    makeRecord({
      requestRef,
      idempotencyKey,
      argsDigest,
      occurredAt: `2026-11-30T12:${String(minute).padStart(2, '0')}:00Z`,
      agent: 'support-bot',
      observed,
      ...over,
    });
}

/** Posts the records with this key; answers their stored ids, in order. */
export async function post(key: Actor, ...records: Outcome[]) {
  return value(await ingestOutcomes(key, batchOf(...records))).records.map((r) => r.id);
}
/** When the record was resolved (null: not resolved). */
export const resolutionOf = async (id: string) =>
  (await db.outcomeRecord.findFirstOrThrow({ where: { id } })).resolvedAt;
