// The packed @countersign/mcp installed with npm alone into an empty project outside the
// repository: its bin runs (bad flags: exit 2 naming the flag), and its wrapper, driving the
// installed SDK against an MCP server, reports to a running console (the console's route
// handlers served over HTTP on 127.0.0.1, on the real database).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { db } from '@/lib/server/db/db';
import { cli } from '@/lib/auth/actor';
import { consoleFetch } from '@/testing/console-fetch';
import { uniq } from '@/testing/factories';
import { childEnvironment } from '@/lib/config';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const project = mkdtempSync(path.join(tmpdir(), 'cs-mcp-consumer-'));
const consoleHttp = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const answer = await consoleFetch(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body,
    }).catch(() => new Response('no route', { status: 404 }));
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => consoleHttp.listen(0, '127.0.0.1', resolve));
  const tgz = execFileSync('npm', ['run', '-s', 'pack:mcp'], { encoding: 'utf8' }).trim().split('\n').pop()!;
  writeFileSync(path.join(project, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', tgz], { cwd: project, stdio: 'pipe' });
}, 240_000);
afterAll(() => {
  consoleHttp.close();
  rmSync(project, { recursive: true, force: true });
});

describe('@countersign/mcp from its tarball', () => {
  it("the countersign-gateway bin runs, under node with the gateway's flags, and exits 2 naming a bad flag", () => {
    const bin = path.join(project, 'node_modules/.bin/countersign-gateway');
    expect(readFileSync(bin, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env -S node --max-semi-space-size=16');
    const r = spawnSync(bin, ['--nope'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--nope');
  });

  it('its wrapper reports a read to the running console', async () => {
    const key = await createApiKey(cli, {
      name: uniq('pack-key'),
      scopes: ['outcomes:write', 'approvals:request', 'grants:redeem'],
    });
    if (!key.ok) throw new Error('key');
    const ref = uniq('pack-req');
    const { port } = consoleHttp.address() as AddressInfo;
    writeFileSync(
      path.join(project, 'agent.mjs'),
      `
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { withCountersign } from '@countersign/mcp';
const server = new McpServer({ name: 'consumer-server', version: '1.0.0' });
server.registerTool('lookup', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'found' }] }));
const [a, b] = InMemoryTransport.createLinkedPair();
await server.connect(b);
const client = new Client({ name: 'consumer', version: '1.0.0' });
await client.connect(a);
const cs = withCountersign(client, { url: process.env.COUNTERSIGN_URL, apiKey: process.env.COUNTERSIGN_API_KEY,
  server: 'consumer-mcp', trustedServer: true, organization: 'acme', principal: 'user_pack' });
const r = await cs.callTool({ name: 'lookup', arguments: {} }, { requestRef: process.env.REF, summary: 'Look something up' });
const flushed = await cs.close();
console.log(JSON.stringify({ category: r.classification.category, flushed: flushed.ok }));
process.exit(0);
`,
    );
    // Not spawnSync: the console answers from this process's event loop.
    const child = spawn(process.execPath, ['agent.mjs'], {
      cwd: project,
      env: childEnvironment({
        COUNTERSIGN_URL: `http://127.0.0.1:${port}`,
        COUNTERSIGN_API_KEY: key.value.secret,
        REF: ref,
      }),
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(JSON.parse(stdout.trim())).toEqual({ category: 'ok', flushed: true });
    const records = await db.outcomeRecord.findMany({
      where: { requestRef: ref },
      select: { toolName: true, delivery: true, server: true },
    });
    expect(records).toEqual([{ toolName: 'lookup', delivery: 'completed', server: 'consumer-mcp' }]);
  }, 60_000);
});
