// `npm run gateway` as a process: bad flags exit 2 naming the flag; in stdio mode stdout carries
// only MCP messages (the SDK client reads it), logs go to stderr.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parseFlags } from './flags';
import { GATEWAY_NODE_FLAGS } from './node-flags';
import { childEnvironment } from '../config';

const TSX = createRequire(import.meta.url).resolve('tsx/cli');
const FS_BIN = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const BASE = ['--server', 'fs', '--principal', 'p', '--organization', 'o'];
const env = childEnvironment({ COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_API_KEY: 'cs_live_test' });

const run = (args: string[], e: NodeJS.ProcessEnv = env) =>
  spawnSync(process.execPath, [TSX, 'scripts/gateway.ts', ...args], { env: e, encoding: 'utf8', timeout: 30_000 });

describe('gateway flags', () => {
  // [args, the flag the message must name]
  const bad: [string[], string][] = [
    [[...BASE, '--bogus', 'x', '--', 'cmd'], '--bogus'],
    [['--principal', 'p', '--organization', 'o', '--', 'cmd'], '--server'],
    [['--server', 's', '--organization', 'o', '--', 'cmd'], '--principal'],
    [[...BASE, '--approval-wait', 'soon', '--', 'cmd'], '--approval-wait'],
    [[...BASE, '--approval-wait', '-1', '--', 'cmd'], '--approval-wait'],
    [[...BASE, '--upstream', 'ftp://x'], '--upstream'],
    [[...BASE, '--upstream', 'not a url'], '--upstream'],
    [[...BASE, '--upstream', 'http://x', '--port', '70000'], '--port'],
    [[...BASE, '--port', '1', '--', 'cmd'], '--port'],
    [[...BASE, '--server', 'twice', '--', 'cmd'], '--server'],
    [[...BASE], '--'],
    [[...BASE, '--upstream', 'http://x', '--', 'cmd'], '--'],
    [['--server', 'x'.repeat(201), '--principal', 'p', '--organization', 'o', '--', 'c'], '--server'],
    [[...BASE, '--upstream', 'http://x', '--allowed-hosts', 'gw.example.com:8808'], '--allowed-hosts'],
    [[...BASE, '--upstream', 'http://x', '--allowed-hosts', 'a,,b'], '--allowed-hosts'],
    [[...BASE, '--upstream', 'http://x', '--allowed-hosts', '*'], '--allowed-hosts'],
    [[...BASE, '--upstream', 'http://x', '--allowed-hosts', 'user@gw.example.com'], '--allowed-hosts'],
    [[...BASE, '--upstream', 'http://x', '--allowed-hosts', 'gw.example.com/mcp'], '--allowed-hosts'],
    [[...BASE, '--allowed-hosts', 'gw.example.com', '--', 'cmd'], '--allowed-hosts'],
    [[...BASE, '--session-idle', '60', '--', 'cmd'], '--session-idle'],
    [[...BASE, '--upstream', 'http://x', '--session-idle', '0'], '--session-idle'],
    [[...BASE, '--upstream', 'http://x', '--session-idle', '86401'], '--session-idle'],
    [[...BASE, '--upstream', 'http://x', '--session-idle', '1.5'], '--session-idle'],
    [[...BASE, '--upstream', 'http://x', '--session-idle', 'soon'], '--session-idle'],
    // Bound beyond loopback with no names listed: not started open to every name.
    [[...BASE, '--upstream', 'http://x', '--host', '0.0.0.0'], '--allowed-hosts'],
    [[...BASE, '--upstream', 'http://x', '--host', '192.168.1.20'], '--allowed-hosts'],
  ];
  it.each(bad)('refuses %j naming %s', (args, flag) => {
    const r = parseFlags(args);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.flag).toBe(flag);
      expect(r.message).toContain(flag);
    }
  });

  it('reads both modes with their defaults', () => {
    expect(parseFlags([...BASE, '--', 'npx', 'srv', '--flag-of-the-server'])).toEqual({
      ok: true,
      flags: {
        server: 'fs',
        principal: 'p',
        organization: 'o',
        approvalWait: 50,
        command: ['npx', 'srv', '--flag-of-the-server'],
        host: '127.0.0.1',
        port: 8808,
      },
    });
    const http = parseFlags([...BASE, '--agent=a', '--upstream', 'http://127.0.0.1:4410/mcp', '--port', '0']);
    expect(http).toMatchObject({ ok: true, flags: { agent: 'a', port: 0, host: '127.0.0.1', sessionIdle: 1800 } });
    expect(parseFlags([...BASE, '--upstream', 'http://x', '--session-idle=86400'])).toMatchObject({
      ok: true,
      flags: { sessionIdle: 86400 },
    });
    expect(http.ok && http.flags.allowedHosts).toBe(undefined);
  });

  it('--allowed-hosts: names and addresses as URLs spell them, for any bind; loopback binds need none', () => {
    const listed = parseFlags([
      ...BASE,
      '--upstream',
      'http://127.0.0.1:4410/mcp',
      '--host',
      '0.0.0.0',
      '--allowed-hosts',
      'GW.Example.com, 10.0.0.7,::1,gw.example.com',
    ]);
    expect(listed).toMatchObject({
      ok: true,
      flags: { host: '0.0.0.0', allowedHosts: ['gw.example.com', '10.0.0.7', '[::1]'] },
    });
    for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.2'])
      expect(parseFlags([...BASE, '--upstream', 'http://x', '--host', host]).ok).toBe(true);
  });

  it('the process exits 2 naming the flag, or the missing environment', () => {
    const r = run([...BASE, '--nope', '--', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--nope');
    expect(r.stdout).toBe('');
    const noKey = run(
      [...BASE, '--', 'x'],
      childEnvironment({ COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_API_KEY: '' }),
    );
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toContain('COUNTERSIGN_API_KEY');
    const open = run([...BASE, '--upstream', 'http://127.0.0.1:9/mcp', '--host', '0.0.0.0', '--port', '0']);
    expect(open.status).toBe(2);
    expect(open.stderr).toContain('--host 0.0.0.0 is not a loopback address: give --allowed-hosts');
  }, 60_000);

  it('`npm run gateway` runs it under node with the flags every launcher gives it (lib/gateway/node-flags.ts)', async () => {
    const scripts = JSON.parse(await readFile('package.json', 'utf8')).scripts as Record<string, string>;
    expect(scripts.gateway).toBe(`node ${GATEWAY_NODE_FLAGS.join(' ')} --import tsx scripts/gateway.ts`);
    const r = spawnSync('npm', ['run', '-s', 'gateway', '--', ...BASE, '--nope', '--', 'x'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--nope');
  });

  it('stdio mode: stdout carries only MCP messages; with the console down from the start a read goes through and a write fails closed unavailable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cs-gw-cli-'));
    await writeFile(join(dir, 'x'), 'read without the console');
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [TSX, 'scripts/gateway.ts', ...BASE, '--', process.execPath, FS_BIN, dir],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c: Buffer) => void stderr.push(c.toString()));
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    try {
      await client.connect(transport); // any non-MCP line on stdout would break this
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('read_text_file');
      const r = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'x') } });
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.content)).toContain('read without the console');
      expect((r._meta as Record<string, unknown>)['countersign/error']).toBeUndefined();
      const w = await client.callTool({ name: 'write_file', arguments: { path: join(dir, 'y'), content: 'no' } });
      expect(w.isError).toBe(true);
      expect((w._meta as Record<string, unknown>)['countersign/error']).toMatchObject({
        category: 'unavailable',
        retry: 'backoff',
      });
      await expect(readFile(join(dir, 'y'), 'utf8')).rejects.toThrow();
    } finally {
      await client.close();
      await rm(dir, { recursive: true, force: true });
    }
    expect(stderr.join('')).not.toContain('cs_live_test');
  }, 60_000);
});
