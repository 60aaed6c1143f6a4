// Redemption over HTTP (node:http keep-alive, bench/lib/http.ts) for bench/approvals.ts: one
// redemption (for the open loop), clients redeeming their own grants as fast as they can, and
// what the app's sessions do meanwhile.
import { type StagedGrant } from './approval-data';
import { timedHttp } from './http';
import { connect } from './setup';

export type RedeemRun = {
  latencies: number[];
  errors: number;
  firstError: string | null;
  seconds: number;
  redeemed: number;
};

/** Redeems one grant; answers whether it was redeemed (200), else what came back. */
export async function redeemOne(
  origin: string,
  apiKey: string,
  g: StagedGrant,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const r = await timedHttp(`${origin}/api/v1/grants/${g.id}/redeem`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ server: g.server, tool: g.tool, argsDigest: g.argsDigest }),
  });
  return r.status === 200 ? { ok: true } : { ok: false, error: `HTTP ${r.status}: ${r.body.slice(0, 400)}` };
}

export async function redeemAll(
  origin: string,
  apiKey: string,
  slices: StagedGrant[][],
  seconds: number,
): Promise<RedeemRun> {
  const out: RedeemRun = { latencies: [], errors: 0, firstError: null, seconds: 0, redeemed: 0 };
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    slices.map(async (slice) => {
      for (const g of slice) {
        if (performance.now() > until) return;
        const body = JSON.stringify({ server: g.server, tool: g.tool, argsDigest: g.argsDigest });
        try {
          const r = await timedHttp(`${origin}/api/v1/grants/${g.id}/redeem`, { method: 'POST', headers, body });
          if (r.status === 200) {
            out.latencies.push(r.ms);
            out.redeemed++;
          } else {
            out.errors++;
            out.firstError ??= `HTTP ${r.status}: ${r.body.slice(0, 400)}`;
          }
        } catch (err) {
          out.errors++;
          out.firstError ??= `request failed: ${err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : err}`;
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    }),
  );
  out.seconds = (performance.now() - started) / 1000;
  return out;
}

/** Deals grants to `n` clients round-robin: each gets its own. */
export const deal = (grants: StagedGrant[], n: number) =>
  Array.from({ length: n }, (_, c) => grants.filter((_, i) => i % n === c));

export type Activity = { samples: number; advisoryWaits: number[]; active: number[]; idleInTx: number[] };

export const mergeActivity = (xs: Activity[]): Activity => ({
  samples: xs.reduce((a, x) => a + x.samples, 0),
  advisoryWaits: xs.flatMap((x) => x.advisoryWaits),
  active: xs.flatMap((x) => x.active),
  idleInTx: xs.flatMap((x) => x.idleInTx),
});

/** Samples the app's sessions every 50 ms until stopped: who waits on the audit lock, who is busy. */
export async function sampleActivity(databaseUrl: string): Promise<{ stop: () => Promise<Activity> }> {
  const out: Activity = { samples: 0, advisoryWaits: [], active: [], idleInTx: [] };
  const client = await connect(databaseUrl);
  let running = true;
  const loop = (async () => {
    while (running) {
      const {
        rows: [r],
      } = await client.query<{ advisory: number; active: number; idle_tx: number }>(`
        SELECT count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory')::int AS advisory,
               count(*) FILTER (WHERE state = 'active')::int AS active,
               count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle_tx
        FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`);
      out.samples++;
      out.advisoryWaits.push(r.advisory);
      out.active.push(r.active);
      out.idleInTx.push(r.idle_tx);
      await new Promise((res) => setTimeout(res, 50));
    }
    await client.end();
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return out;
    },
  };
}
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
