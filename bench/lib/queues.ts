// bench:ui's two queues of the same size, told apart only by the arguments: one whose requests
// carry them (the rows preview them), one whose requests came without (the agent sent none; the
// rows say so). Each is the "Needs my decision" of its own reviewer, because each reviewer has
// already approved every request of the other queue (they need two approvals). Staged through the
// data layer in a worker process (./approvals-worker.ts), which masks and seals the arguments as
// the console does; then the queue page is timed for both reviewers in alternating order.
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import type { Actor } from '@/lib/auth/actor';
import type { inWorker } from './approvals-worker';
import { timeNavigation } from './browser';
import { log } from './report';
import { createUser, type Db } from './setup';
import { startWorker } from './worker';

export const QUEUES = ['with arguments', 'without arguments'] as const;
export type Queue = (typeof QUEUES)[number];
const email = (q: Queue) => `${q === 'with arguments' ? 'args' : 'no-args'}@bench.local`;

/** Stages both queues of `count` requests each, and their reviewers; answers each reviewer's e-mail. */
export async function stageQueues(
  db: Db,
  env: { AUTH_SECRET: string },
  keyId: string,
  count: number,
  password: string,
): Promise<Record<Queue, string>> {
  const worker = await startWorker<typeof inWorker>(fileURLToPath(new URL('./approvals-worker.ts', import.meta.url)), {
    DATABASE_URL: db.url,
    AUTH_SECRET: env.AUTH_SECRET,
    COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: 'off',
  });
  const reviewers = {} as Record<Queue, Actor>;
  for (const q of QUEUES) {
    const principal = `bench-${email(q).split('@')[0]}`;
    createUser(db, { email: email(q), role: 'reviewer', password, principal });
    const { rows } = await db.sql.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [email(q)]);
    reviewers[q] = {
      kind: 'user',
      userId: rows[0].id,
      email: email(q),
      name: q,
      role: 'reviewer',
      principalId: principal,
      tokenId: null,
    };
  }
  log(`two queues of ${count} pending: with arguments, without…`);
  const withArgs = await worker.call('request', keyId, count, 'refund with arguments');
  const without = await worker.call('request', keyId, count, 'refund without');
  // Each reviewer's own queue is the one the other reviewer has approved every request of.
  await worker.call('decide', reviewers['with arguments'], without);
  await worker.call('decide', reviewers['without arguments'], withArgs);
  await db.sql.query('VACUUM ANALYZE approval_requests, approval_decisions');
  return { 'with arguments': email('with arguments'), 'without arguments': email('without arguments') };
}

/**
 * `rounds` rounds (two more first, not counted) of a client navigation from Account to the queue
 * for each reviewer, the order alternating; answers each queue's milliseconds by round.
 */
export async function timeQueues(
  pages: Record<Queue, Page>,
  rounds: number,
  pauseMs: number,
): Promise<Record<Queue, number[]>> {
  const h1 = (p: Page, name: string) => p.getByRole('heading', { level: 1, name, exact: true });
  const shown = (p: Page): Locator[] => [h1(p, 'Approvals'), p.getByRole('main').locator('a[href^="/approvals/"]')];
  const times: Record<Queue, number[]> = { 'with arguments': [], 'without arguments': [] };
  for (let round = -2; round < rounds; round++) {
    for (const q of round % 2 ? QUEUES : [...QUEUES].reverse()) {
      const page = pages[q];
      await page.locator('a[href="/account"]').first().click();
      await h1(page, 'Account').waitFor();
      await page.waitForTimeout(pauseMs);
      const link = page.locator('a[href="/approvals"]').first();
      const ms = await timeNavigation(page, () => link.click(), '/approvals', shown(page), `the queue, ${q}`);
      if (round >= 0) times[q].push(ms);
    }
  }
  return times;
}

/** Whether the queue page shows argument previews (it must for one reviewer and not the other). */
export async function showsArguments(page: Page): Promise<boolean> {
  return (await page.getByRole('main').getByRole('list', { name: 'Arguments', exact: true }).count()) > 0;
}
