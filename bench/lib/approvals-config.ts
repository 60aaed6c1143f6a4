// What bench/approvals.ts stages and runs: sizes (from the environment), and the targets.
import { ms, type Stats, envNumber } from './report';
import type { Schedule } from './open-loop';

export const num = envNumber;
/** Redemptions offered per second in the open-loop phase (and the floor's requests per second). */
export const RATE = num('BENCH_REDEEM_RATE', 200);
/** How long each open-loop phase offers its rate, in total over its rounds. */
export const OPEN_SECONDS = num('BENCH_REDEEM_SECONDS', 30);
export const SCHEDULE: Schedule = (() => {
  const s = process.env.BENCH_REDEEM_SCHEDULE || 'poisson';
  if (s !== 'poisson' && s !== 'even') throw new Error('BENCH_REDEEM_SCHEDULE must be poisson or even');
  return s;
})();
/**
 * The open-loop phases (redemption, GET /api/v1/me, bare 401) take turns in this many rounds, in
 * rotating order, so a change in the machine's load meanwhile falls on all three alike.
 */
export const ROUNDS = 3;
export const PER_ROUND = Math.ceil((RATE * OPEN_SECONDS) / ROUNDS);
export const OPEN_GRANTS = PER_ROUND * ROUNDS;
export const PENDING = num('BENCH_QUEUE_PENDING', 10_000);
export const QUEUE_REQUESTS = num('BENCH_QUEUE_REQUESTS', 30);
export const WARM_GRANTS = 400;
export const SERIAL_GRANTS = 200;
export const TRACE_GRANTS = 100;
export const TARGET = { redeemP99Ms: 30, queueMs: 150 };

export const statsRow = (name: string, s: Stats, extra = '') => [
  name,
  ms(s.p50),
  ms(s.p95),
  ms(s.p99),
  ms(s.max),
  extra,
];
