import 'server-only';
import { db } from '../db/db';
import { rows } from '../db/kysely';
import { eraseLapsedArguments, expireStale } from './sql';
import { enqueueWebhookEvents } from '../webhooks/sql';
import { appendAudit } from '../audit/audit';
import { TX_OPTIONS } from './shared';

/**
 * Marks pending requests past their expiry (database clock) as expired, with an audit entry
 * each (their arguments erased in the same statement, by the database), and erases the arguments
 * of approved requests whose grant lapsed unused. Reads never depend on it: they already report
 * such requests as expired, their arguments as erased.
 */
export async function expireStaleApprovals(batch = 500): Promise<number> {
  return db.$transaction(
    async (tx) => {
      const expired = await rows(expireStale(batch), tx);
      for (const r of expired) {
        await appendAudit(tx, {
          actor: 'system',
          action: 'approval.expire',
          targetType: 'approval',
          targetId: r.id,
          data: { expiresAt: r.expires_at.toISOString() },
        });
        await rows(enqueueWebhookEvents(r.id, [{ type: 'approval.expired' }]), tx);
      }
      await rows(eraseLapsedArguments(batch), tx);
      return expired.length;
    },
    { ...TX_OPTIONS, timeout: 60_000 },
  );
}

const SWEEP_INTERVAL_MS = 60_000;
const sweep = globalThis as unknown as { countersignApprovalSweepAt?: number };

// From the list reads, at most once a minute per process: cheap, and no timer to manage.
export async function expireStaleApprovalsNowAndThen(): Promise<void> {
  const last = sweep.countersignApprovalSweepAt ?? 0;
  if (Date.now() - last < SWEEP_INTERVAL_MS) return;
  sweep.countersignApprovalSweepAt = Date.now();
  try {
    await expireStaleApprovals();
  } catch (err) {
    // Only bookkeeping: the read itself already reports the right status.
    console.error('[approvals] expiring stale requests failed', err);
  }
}
