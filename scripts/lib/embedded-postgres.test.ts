import net from 'node:net';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort, startEmbeddedPostgres } from './embedded-postgres';
import { restoreEnv, setEnv } from '@/testing/env';

// COUNTERSIGN_PG_PORT is the main cluster's port; a harness's own cluster asks for a free one.
// Its own folder (.faults-data/port), so it never meets another file's cluster.
const dir = path.resolve('.faults-data', 'port');
let stop: ((mode?: 'fast' | 'immediate') => void) | undefined;

// The cluster is thrown away: an immediate stop skips the shutdown checkpoint, which once took
// longer than pg_ctl's 60 s wait under CI's load (the hook timed out; the test itself had passed).
afterAll(() => {
  stop?.('immediate');
  restoreEnv();
}, 120_000);

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

it('uses COUNTERSIGN_PG_PORT by default, and a free port instead when asked, even while that port is taken', async () => {
  const configured = await freePort();
  setEnv({ COUNTERSIGN_PG_PORT: String(configured) });

  const first = await startEmbeddedPostgres(dir);
  stop = first.stop;
  expect(first.started).toBe(true);
  expect(first.port).toBe(configured);
  first.stop();
  stop = undefined;

  // Something else (the main cluster) now holds the configured port.
  const holder = await listen(configured);
  try {
    const second = await startEmbeddedPostgres(dir, { port: 'free' });
    stop = second.stop;
    expect(second.started).toBe(true);
    expect(second.port).not.toBe(configured);
    const probe = await new Promise<string>((resolve, reject) => {
      const s = net.connect(second.port, '127.0.0.1', () => {
        s.end();
        resolve('listening');
      });
      s.once('error', reject);
    });
    expect(probe).toBe('listening');
  } finally {
    await new Promise((r) => holder.close(r));
  }
});
