// The packed @countersign/mcp installed with npm alone into an empty project outside the
// repository: it declares exactly the packages its files import, its bin runs (bad flags: exit 2
// naming the flag), and its wrapper, driving the installed SDK v2 client over Streamable HTTP
// against a 2025 server (SDK v1's McpServer, the era's own) and a 2026-07-28 one (the SDK v2 test
// server), both served from this process, reports to a running console (the console's route
// handlers served over HTTP on 127.0.0.1, on the real database).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { db } from '@/lib/server/db/db';
import { cli } from '@/lib/auth/actor';
import { consoleFetch } from '@/testing/console-fetch';
import { childEnvironment } from '@/lib/config';
import { startLegacyHttp } from '@/testing/mcp-legacy-http';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import { decideApproval } from '@/lib/server/approvals';
import { makeUser, uniq } from '@/testing/factories';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const repoPackage = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const project = mkdtempSync(path.join(tmpdir(), 'cs-mcp-consumer-'));
const installed = path.join(project, 'node_modules/@countersign/mcp');
const closeAfter: (() => Promise<void>)[] = [];
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
afterAll(async () => {
  await Promise.allSettled(closeAfter.map((close) => close()));
  consoleHttp.close();
  rmSync(project, { recursive: true, force: true });
});

/** The packages a shipped file imports (`from '…'`, `import('…')`), Node's built-ins aside. */
function packagesImportedBy(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  const specifiers = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["']([^"'.][^"']*)["']/g)].map((m) => m[1]);
  const packageOf = (s: string) => s.split('/', s.startsWith('@') ? 2 : 1).join('/');
  return specifiers.filter((s) => !s.startsWith('node:')).map(packageOf);
}

describe('@countersign/mcp from its tarball', () => {
  it('declares as dependencies exactly the packages its files import; its wrapper imports no SDK v1', () => {
    const dist = path.join(installed, 'dist');
    const imports = Object.fromEntries(
      readdirSync(dist)
        .filter((f) => f.endsWith('.js'))
        .map((f) => [f, new Set(packagesImportedBy(path.join(dist, f)))]),
    );
    const declared = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const all = new Set(Object.values(imports).flatMap((s) => [...s]));
    expect(Object.keys(declared.dependencies).sort()).toEqual([...all].sort());
    // The agent-side wrapper is on SDK v2 alone (docs/api.md, "The agent package").
    expect([...imports['index.js']].sort()).toEqual(['@modelcontextprotocol/client', 'zod']);
    for (const [name, version] of Object.entries(declared.dependencies))
      expect(version, name).toBe(repoPackage.dependencies[name]);
  });

  it("the countersign-gateway bin runs, under node with the gateway's flags, and exits 2 naming a bad flag", () => {
    const bin = path.join(project, 'node_modules/.bin/countersign-gateway');
    expect(readFileSync(bin, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env -S node --max-semi-space-size=16');
    const r = spawnSync(bin, ['--nope'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--nope');
  });

  it('its wrapper (on SDK v2) reports a call to the running console from a 2025 server and a 2026-07-28 one, over HTTP', async () => {
    const key = await createApiKey(cli, {
      name: uniq('pack-key'),
      scopes: ['outcomes:write', 'approvals:request', 'grants:redeem'],
    });
    if (!key.ok) throw new Error('key');
    const ref = uniq('pack-req');
    const { port } = consoleHttp.address() as AddressInfo;
    // 2025: SDK v1's McpServer (a session per client, 2025 only), which the wrapper's default
    // negotiation (auto) probes and then meets in 2025. 2026-07-28: the SDK v2 test server, which
    // the same negotiation reaches in its era. The consumer imports no SDK but the client.
    const legacyServer = await startLegacyHttp(() => {
      const server = new McpServer({ name: 'consumer-server', version: '1.0.0' });
      server.registerTool('lookup', { annotations: { readOnlyHint: true } }, async () => ({
        content: [{ type: 'text', text: 'found' }],
      }));
      return server;
    }, closeAfter);
    const modern = await startV2HttpServer();
    writeFileSync(
      path.join(project, 'agent.mjs'),
      `
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { withCountersign, observingFetch } from '@countersign/mcp';
const options = { url: process.env.COUNTERSIGN_URL, apiKey: process.env.COUNTERSIGN_API_KEY,
  trustedServer: true, organization: 'acme', principal: 'user_pack' };
const http = (url) => new StreamableHTTPClientTransport(new URL(url), { fetch: observingFetch() });
const legacy = new Client({ name: 'consumer', version: '1.0.0' });
const old = withCountersign(legacy, { ...options, server: 'consumer-mcp', connect: () => legacy.connect(http(process.env.LEGACY_URL)) });
const r1 = await old.callTool({ name: 'lookup', arguments: {} }, { requestRef: process.env.REF, summary: 'Look something up' });
const client = new Client({ name: 'consumer', version: '1.0.0' });
const cs = withCountersign(client, { ...options, server: 'consumer-v2-mcp', reporter: old.reporter,
  connect: () => client.connect(http(process.env.MODERN_URL)) });
const r2 = await cs.callTool({ name: 'test_simple_text', arguments: {} }, { requestRef: process.env.REF, summary: 'Say something' });
const flushed = await old.close();
console.log(JSON.stringify({ categories: [r1.classification.category, r2.classification.category],
  versions: [r1.record.protocolVersion, r2.record.protocolVersion], resultType: r2.record.observed.resultType ?? null, flushed: flushed.ok }));
process.exit(0);
`,
    );
    // Not spawnSync: the console and the 2026 server answer from this process's event loop.
    const child = spawn(process.execPath, ['agent.mjs'], {
      cwd: project,
      env: childEnvironment({
        COUNTERSIGN_URL: `http://127.0.0.1:${port}`,
        COUNTERSIGN_API_KEY: key.value.secret,
        LEGACY_URL: legacyServer.url,
        MODERN_URL: modern.url,
        REF: ref,
      }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The 2026 server's tool declares no annotations, so MCP's defaults make it destructive and
    // open-world: two reviewers approve its request.
    const reviewers = [await makeUser('reviewer'), await makeUser('reviewer')];
    let done = false;
    const stop = setTimeout(() => child.kill(), 40_000);
    void closed.then(() => (done = true));
    while (!done) {
      const pending = await db.approvalRequest.findFirst({ where: { requestRef: ref, status: 'pending' } });
      if (pending) {
        const decided = await decideApproval(reviewers[pending.version - 1] ?? reviewers[0], {
          id: pending.id,
          decision: 'approve',
          reason: 'pack test',
          version: pending.version,
        });
        if (!decided.ok && decided.failure !== 'conflict') throw new Error(`decideApproval: ${decided.failure}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const code = await closed;
    clearTimeout(stop);
    await modern.close();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const seen = JSON.parse(stdout.trim()) as { versions: string[] };
    expect(seen).toEqual({
      categories: ['ok', 'ok'],
      versions: [expect.any(String), '2026-07-28'],
      resultType: 'complete',
      flushed: true,
    });
    expect(seen.versions[0]).not.toBe('2026-07-28');
    const records = await db.outcomeRecord.findMany({
      where: { requestRef: ref },
      select: { toolName: true, delivery: true, server: true },
      orderBy: { occurredAt: 'asc' },
    });
    expect(records).toEqual([
      { toolName: 'lookup', delivery: 'completed', server: 'consumer-mcp' },
      { toolName: 'test_simple_text', delivery: 'completed', server: 'consumer-v2-mcp' },
    ]);
  }, 60_000);
});
