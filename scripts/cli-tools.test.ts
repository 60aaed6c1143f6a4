// The catalog's commands (docs/catalog.md "Pinning"): the real CLI in a child process, against this
// file's own database, on definitions pinned here as policy/evaluate pins them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { uniq } from '@/testing/factories';
import { childEnvironment } from '@/lib/config';
import { cli as cliActor } from '@/lib/auth/actor';
import { pinDefinitions } from '@/lib/server/catalog/catalog';
import { db } from '@/lib/server/db/db';

const exec = promisify(execFile);

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(
      'node_modules/.bin/tsx',
      ['--conditions=react-server', 'scripts/cli.ts', ...args],
      {
        env: childEnvironment({}),
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const inputSchema = { type: 'object', properties: { id: { type: 'string' } } };
const getOrder = {
  name: 'get_order',
  description: 'Reads one order by its id. Never changes anything.',
  inputSchema,
  annotations: { readOnlyHint: true },
};

describe.concurrent('npm run cli: the tool catalog', { timeout: 90_000 }, () => {
  it('tools:lint prints the findings, exits 0 without a high one and 1 with one; 2 for an unknown server', async () => {
    const server = uniq('lint-mcp');
    await pinDefinitions(cliActor, server, [getOrder]);
    const clean = await cli('tools:lint', '--server', server);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain(`${server}: 1 tool, 0 findings`);
    await pinDefinitions(cliActor, server, [
      getOrder,
      {
        name: 'delete_order',
        description: 'Deletes an order for good.',
        inputSchema,
        annotations: { readOnlyHint: true },
      },
    ]);
    const high = await cli('tools:lint', '--server', server);
    expect(high.code).toBe(1);
    expect(high.stdout).toMatch(/high\s+contradiction \(delete_order\): /);
    const unknown = await cli('tools:lint', '--server', uniq('nobody'));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No gateway has reported/);
    expect((await cli('tools:lint')).stderr).toContain('--server');
  });

  it('tools:accept shows what differs and accepts the held definition; refuses when nothing is held or the hash is not it', async () => {
    const server = uniq('accept-mcp');
    await pinDefinitions(cliActor, server, [getOrder]);
    const none = await cli('tools:accept', '--server', server, '--tool', 'get_order');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Nothing is held for get_order');
    const [verdict] = await pinDefinitions(cliActor, server, [{ ...getOrder, description: 'Reads an order.' }]);
    expect(verdict.held).toBe(true);
    const wrong = await cli(
      'tools:accept',
      '--server',
      server,
      '--tool',
      'get_order',
      '--hash',
      `sha256:${'0'.repeat(64)}`,
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/is sha256:[0-9a-f]{64}, not sha256:0+/);
    const bad = await cli('tools:accept', '--server', server, '--tool', 'get_order', '--hash', 'nope');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--hash: must be sha256:');
    const ok = await cli('tools:accept', '--server', server, '--tool', 'get_order');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(
      'description:\n  accepted: Reads one order by its id. Never changes anything.\n  held:     Reads an order.',
    );
    expect(ok.stdout).toMatch(/Accepted get_order on \S+: sha256:[0-9a-f]{64}/);
    const row = await db.toolDefinition.findFirstOrThrow({ where: { server } });
    expect([row.heldHash, row.acceptedBy]).toEqual([null, 'cli']);
  });

  it('servers:set --hold-new-tools on|off', async () => {
    const server = uniq('hold-mcp');
    const on = await cli('servers:set', '--name', server, '--hold-new-tools', 'on');
    expect(on.code).toBe(0);
    expect(on.stdout).toContain('new tools are held until an admin accepts them');
    expect(await pinDefinitions(cliActor, server, [getOrder])).toEqual([{ name: 'get_order', held: true }]);
    const off = await cli('servers:set', '--name', server, '--hold-new-tools', 'off');
    expect(off.stdout).toContain('new tools are accepted at their first sighting');
    const bad = await cli('servers:set', '--name', server, '--hold-new-tools', 'maybe');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--hold-new-tools: must be on or off');
  });
});
