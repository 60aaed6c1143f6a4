// Closed-loop HTTP load: C clients, each POSTing its next body as soon as the previous answer
// is read, for a fixed time. Node's global fetch (undici) keeps the connections alive.
import { randomBytes } from 'node:crypto';
import type { Bodies } from './records';

export type LoadResult = {
  requests: number; // answered 200
  accepted: number; // records the answers say were stored
  errors: number;
  firstError: string | null;
  latenciesMs: number[]; // of the 200 answers, request sent to body read
  seconds: number;
};

const runId = randomBytes(3).toString('hex');
let batchNo = 0;

export async function runLoad(opts: {
  url: string;
  apiKey: string;
  bodies: Bodies;
  concurrency: number;
  seconds?: number;
  requestsPerClient?: number;
}): Promise<LoadResult> {
  const { url, apiKey, bodies, concurrency } = opts;
  const out: LoadResult = { requests: 0, accepted: 0, errors: 0, firstError: null, latenciesMs: [], seconds: 0 };
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const started = performance.now();
  const until = started + (opts.seconds ?? Infinity) * 1000;

  const client = async () => {
    for (let sent = 0; performance.now() < until && sent < (opts.requestsPerClient ?? Infinity); sent++) {
      const body = bodies.next(`${runId}${(batchNo++).toString(36)}`);
      const t0 = performance.now();
      try {
        const res = await fetch(url, { method: 'POST', headers, body });
        const text = await res.text();
        const ms = performance.now() - t0;
        const accepted = /^\{"accepted":(\d+)/.exec(text);
        if (res.status === 200 && accepted) {
          out.requests++;
          out.accepted += Number(accepted[1]);
          out.latenciesMs.push(ms);
        } else {
          out.errors++;
          out.firstError ??= `HTTP ${res.status}: ${text.slice(0, 600)}`;
        }
      } catch (err) {
        out.errors++;
        out.firstError ??= `request failed: ${err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : err}`;
        await new Promise((r) => setTimeout(r, 100)); // no hot loop against a dead server
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  out.seconds = (performance.now() - started) / 1000;
  return out;
}

/** Nearest-rank percentile, in the unit of the values; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
