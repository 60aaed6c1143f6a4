// What bench/approvals.ts stages and runs: sizes (from the environment), and the targets.
import { ms, type Stats, envNumber } from './report';

export const num = envNumber;
export const GRANTS = num('BENCH_REDEEM_GRANTS', 5_000);
export const CLIENTS = num('BENCH_REDEEM_CLIENTS', 50);
export const REDEEM_SECONDS = num('BENCH_REDEEM_SECONDS', 60);
export const PENDING = num('BENCH_QUEUE_PENDING', 10_000);
export const QUEUE_REQUESTS = num('BENCH_QUEUE_REQUESTS', 30);
export const WARM_GRANTS = 100;
export const SERIAL_GRANTS = 200;
export const TRACE_GRANTS = 100;
export const MID_CLIENTS = 10;
export const MID_GRANTS = Math.min(1_000, GRANTS);
// An added measure, not the target's: bursts of CLIENTS simultaneous redemptions, each client
// sending one and waiting for nothing else (an open burst, not a closed loop).
export const BURST_ROUNDS = 5;
export const TARGET = { redeemP99Ms: 30, queueMs: 150 };

export const statsRow = (name: string, s: Stats, extra = '') => [
  name,
  ms(s.p50),
  ms(s.p95),
  ms(s.p99),
  ms(s.max),
  extra,
];
