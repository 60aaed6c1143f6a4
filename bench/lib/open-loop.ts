// Open-loop load: requests sent on a schedule fixed in advance (a rate, Poisson or evenly spaced),
// whatever the answers do. A slow answer does not delay the next send, so a stall shows up in
// the latencies instead of hiding in a lower send rate (no coordinated omission): each latency is
// measured from the request's *scheduled* send time to its last byte. How late this process sent
// (the load generator's own lag on a busy machine) is reported apart.
import { prng } from './report';

export type Schedule = 'poisson' | 'even';

export type OpenLoopRun = {
  /** Requests per second asked for. */
  offered: number;
  /** Requests scheduled (and sent). */
  sent: number;
  ok: number;
  errors: number;
  firstError: string | null;
  /** Of the good answers: scheduled send time → last byte read. */
  latencies: number[];
  /** Of every request: scheduled send time → the moment this process sent it. */
  sendLag: number[];
  /** First scheduled send → last answer read. */
  seconds: number;
};

export const emptyRun = (offered: number): OpenLoopRun => ({
  offered,
  sent: 0,
  ok: 0,
  errors: 0,
  firstError: null,
  latencies: [],
  sendLag: [],
  seconds: 0,
});

/** Good answers per second over the run. */
export const achieved = (r: OpenLoopRun) => (r.seconds > 0 ? r.ok / r.seconds : NaN);

/** Send times in ms from the start: `count` of them at `rate` per second. */
export function scheduleTimes(rate: number, count: number, schedule: Schedule, seed = 1): number[] {
  const random = prng(seed);
  const gap = 1000 / rate;
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    out.push(t);
    // Poisson arrivals: exponential gaps with the same mean (1 − u is in (0, 1]).
    t += schedule === 'even' ? gap : -Math.log(1 - random()) * gap;
  }
  return out;
}

/**
 * Sends `count` requests at `rate` per second; `send(i)` sends the i-th and answers whether it
 * went as expected (an error text otherwise). Resolves once every answer is in.
 */
export async function openLoop(opts: {
  rate: number;
  count: number;
  schedule: Schedule;
  seed?: number;
  send: (i: number) => Promise<{ ok: true } | { ok: false; error: string }>;
}): Promise<OpenLoopRun> {
  const { rate, count, send } = opts;
  const out = emptyRun(rate);
  const times = scheduleTimes(rate, count, opts.schedule, opts.seed);
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  let last = t0;
  const fire = (i: number) => {
    const due = t0 + times[i];
    out.sendLag.push(performance.now() - due);
    out.sent++;
    pending.push(
      send(i).then(
        (r) => {
          const end = performance.now();
          last = Math.max(last, end);
          if (r.ok) {
            out.ok++;
            out.latencies.push(end - due);
          } else {
            out.errors++;
            out.firstError ??= r.error;
          }
        },
        (err: unknown) => {
          last = Math.max(last, performance.now());
          out.errors++;
          out.firstError ??= `request failed: ${err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : err}`;
        },
      ),
    );
  };
  for (let i = 0; i < count;) {
    const now = performance.now();
    while (i < count && t0 + times[i] <= now) fire(i++);
    if (i < count) await new Promise((res) => setTimeout(res, Math.max(0, t0 + times[i] - performance.now())));
  }
  await Promise.all(pending);
  out.seconds = (last - t0) / 1000;
  return out;
}

/** Several runs of the same kind as one (their rates are the same; their seconds add up). */
export function mergeRuns(runs: OpenLoopRun[]): OpenLoopRun {
  const out = emptyRun(runs[0]?.offered ?? NaN);
  for (const r of runs) {
    out.sent += r.sent;
    out.ok += r.ok;
    out.errors += r.errors;
    out.firstError ??= r.firstError;
    out.latencies.push(...r.latencies);
    out.sendLag.push(...r.sendLag);
    out.seconds += r.seconds;
  }
  return out;
}
