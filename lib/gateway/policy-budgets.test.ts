// The budgets of POST /api/v1/policy/evaluate as the gateway's policy cache keeps them
// (lib/gateway/policy.ts): the console's resolved budgets from the real route; from a console that
// sends none, or sends one out of bounds, the defaults (5 failed attempts, 200 calls, 1000 ms).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { uniq } from '@/testing/factories';
import { consoleActors, CONSOLE_URL, type ConsoleActors } from '@/testing/gateway-fixtures';
import { consoleFetch, type Fetch } from '@/testing/console-fetch';
import { PolicyCache } from '@/lib/gateway/policy';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});

const TOOLS = [
  { name: 'get_order', inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: true } },
  { name: 'refund_payment', inputSchema: { type: 'object' as const } },
];

// The real console's answer, its tools' budgets replaced by `budgets(name)` (undefined: left out).
const rewritten =
  (budgets: (name: string) => unknown): Fetch =>
  async (input, init) => {
    const res = await consoleFetch(input, init);
    const body = (await res.json()) as { tools: { name: string; budgets?: unknown }[] };
    for (const t of body.tools) {
      const b = budgets(t.name);
      if (b === undefined) delete t.budgets;
      else t.budgets = b;
    }
    return Response.json(body, { status: res.status });
  };

describe('the gateway keeps each tool’s budgets', () => {
  it('as the console resolved them', async () => {
    const server = uniq('gw-budgets');
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 1, calls: 30 });
    await setPolicyRule(cli, { server, tool: 'refund_payment', requiredApprovals: 2, backoffBaseMs: 4000 });
    const cache = new PolicyCache({ url: CONSOLE_URL, apiKey: actors.key, fetch: consoleFetch }, server);
    const snapshot = await cache.get(TOOLS);
    expect(snapshot?.tools.get('get_order')?.budgets).toEqual({ failedAttempts: 5, calls: 30, backoffBaseMs: 1000 });
    expect(snapshot?.tools.get('refund_payment')?.budgets).toEqual({
      failedAttempts: 5,
      calls: 30,
      backoffBaseMs: 4000,
    });
  });

  it('the defaults where the console sends none, and for each budget out of bounds or of the wrong kind', async () => {
    const server = uniq('gw-budgets-old');
    const fetch = rewritten((name) =>
      name === 'get_order' ? undefined : { failedAttempts: 0, calls: '50', backoffBaseMs: 2500.5, extra: 1 },
    );
    const cache = new PolicyCache({ url: CONSOLE_URL, apiKey: actors.key, fetch }, server);
    const snapshot = await cache.get(TOOLS);
    const defaults = { failedAttempts: 5, calls: 200, backoffBaseMs: 1000 };
    expect(snapshot?.tools.get('get_order')?.budgets).toEqual(defaults);
    expect(snapshot?.tools.get('refund_payment')?.budgets).toEqual(defaults);

    const partly = new PolicyCache(
      { url: CONSOLE_URL, apiKey: actors.key, fetch: rewritten(() => ({ failedAttempts: 7, calls: 100001 })) },
      server,
    );
    expect((await partly.get(TOOLS))?.tools.get('get_order')?.budgets).toEqual({
      failedAttempts: 7,
      calls: 200,
      backoffBaseMs: 1000,
    });
  });
});
