// The gateway's policy cache against the real console: an admin's change applies once the few
// seconds of cache are over; the console down keeps the last answer; none ever means unknown.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { consoleActors, CONSOLE_URL, type ConsoleActors } from '@/testing/gateway-fixtures';
import { switchableConsole } from '@/testing/console-fetch';
import { PolicyCache } from './policy';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});

const TOOLS = [
  { name: 'read_file', inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: true } },
  { name: 'write_file', inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: false } },
];

describe('PolicyCache', () => {
  it('answers from the cache within the TTL and asks again after it', async () => {
    const server = uniq('cache-mcp');
    await trustServer(cli, server);
    const c = switchableConsole();
    let now = 1_000_000;
    const cache = new PolicyCache({ url: CONSOLE_URL, apiKey: actors.key, fetch: c.fetch }, server, 3000, () => now);
    const first = await cache.get(TOOLS);
    expect(first?.trusted).toBe(true);
    expect(first?.tools.get('read_file')).toMatchObject({ readOnly: true, blocked: false, requiredApprovals: 0 });
    expect(first?.tools.get('write_file')).toMatchObject({ readOnly: false, blocked: false, requiredApprovals: 2 });

    await setPolicyRule(cli, { server, tool: 'write_file', requiredApprovals: 'blocked' });
    now += 2000;
    expect((await cache.get(TOOLS))?.tools.get('write_file')?.blocked).toBe(false); // still cached
    now += 1500;
    expect((await cache.get(TOOLS))?.tools.get('write_file')?.blocked).toBe(true); // asked again
    expect(c.calls.filter((x) => x.path === '/api/v1/policy/evaluate')).toHaveLength(2);

    c.down();
    now += 10_000;
    expect((await cache.get(TOOLS))?.tools.get('write_file')?.blocked).toBe(true); // the last answer
  });

  it('knows nothing when the console was never reached', async () => {
    const c = switchableConsole();
    c.down();
    const cache = new PolicyCache({ url: CONSOLE_URL, apiKey: actors.key, fetch: c.fetch }, uniq('never'));
    expect(await cache.get(TOOLS)).toBeNull();
  });

  it('concurrent askers share one request', async () => {
    const c = switchableConsole();
    const cache = new PolicyCache({ url: CONSOLE_URL, apiKey: actors.key, fetch: c.fetch }, uniq('conc'));
    await Promise.all(Array.from({ length: 20 }, () => cache.get(TOOLS)));
    expect(c.calls).toHaveLength(1);
  });
});
