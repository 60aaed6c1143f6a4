// DNS-rebinding protection of the gateway's HTTP listener (docs/gateway.md "Streamable HTTP: clients
// that connect by URL"): bound to loopback, a request whose Host or Origin is not a loopback name
// (or one listed with --allowed-hosts) gets 403 with the JSON-RPC error body the MCP SDK's guards
// give, before it reaches anything; the conformance suite's `dns-rebinding-protection` scenario,
// reproduced here request by request, and then run as the suite itself runs it.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runHttp, type HttpOptions } from './http';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  floodServer,
  serveOverHttp,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

async function startUpstream(): Promise<URL> {
  const upstream = await serveOverHttp(floodServer);
  open.push(upstream.close);
  return upstream.url;
}

async function gateway(options: HttpOptions = {}) {
  const t = testContext(actors, uniq('guarded'));
  const g = await runHttp(t.ctx, await startUpstream(), '127.0.0.1', 0, options);
  open.push(async () => {
    await g.close();
    await t.ctx.reporter.close(2000);
  });
  return { url: new URL(g.url), port: new URL(g.url).port };
}

interface Reply {
  status: number;
  type: string | undefined;
  sessionId: string | undefined;
  body: unknown;
}

/** A request to the gateway's address with the Host and Origin given (fetch would not send such a Host). */
function send(
  url: URL,
  headers: Record<string, string>,
  body?: unknown,
  method = 'POST',
  pathname = url.pathname,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: pathname,
        method,
        headers: {
          accept: 'application/json, text/event-stream',
          ...(text ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          // A JSON body, or the first message of an SSE one (past a priming event); anything else as text.
          const data = /^(event|id):/.test(raw) ? /^data: (.+)$/m.exec(raw)?.[1] : raw;
          let parsed: unknown = raw;
          try {
            parsed = JSON.parse(data ?? raw);
          } catch {
            // plain text
          }
          const sid = res.headers['mcp-session-id'];
          resolve({
            status: res.statusCode!,
            type: res.headers['content-type'],
            sessionId: typeof sid === 'string' ? sid : undefined,
            body: parsed,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const initialize = (version = '2025-11-25') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'host-guard-test', version: '1.0.0' } },
});
const refusal = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

describe('the HTTP listener bound to loopback', () => {
  it('answers a foreign Host with 403 and a JSON-RPC error, whatever the path or method', async () => {
    const { url } = await gateway();
    const post = await send(url, { host: 'evil.example.com' }, initialize());
    expect(post).toEqual({
      status: 403,
      type: 'application/json',
      sessionId: undefined,
      body: refusal('Invalid Host: evil.example.com'),
    });
    const withPort = await send(url, { host: 'evil.example.com:8808' }, initialize());
    expect(withPort.status).toBe(403);
    expect(withPort.body).toEqual(refusal('Invalid Host: evil.example.com'));
    expect((await send(url, { host: 'evil.example.com' }, undefined, 'GET')).status).toBe(403);
    expect((await send(url, { host: 'evil.example.com' }, undefined, 'GET', '/elsewhere')).status).toBe(403);
    // A name that only starts like a loopback one is foreign too.
    expect((await send(url, { host: 'localhost.evil.example.com' }, initialize())).status).toBe(403);
    expect((await send(url, { host: 'evil.example.com@127.0.0.1' }, initialize())).body).toEqual(
      refusal('Invalid Host header: evil.example.com@127.0.0.1'),
    );
  });

  it('answers a foreign Origin with 403 even under a loopback Host; no Origin at all is fine', async () => {
    const { url, port } = await gateway();
    const host = `127.0.0.1:${port}`;
    const foreign = await send(url, { host, origin: 'http://evil.example.com' }, initialize());
    expect(foreign).toMatchObject({ status: 403, body: refusal('Invalid Origin header: http://evil.example.com') });
    const opaque = await send(url, { host, origin: 'null' }, initialize());
    expect(opaque).toMatchObject({ status: 403, body: refusal('Invalid Origin header: null') });
    const none = await send(url, { host }, initialize());
    expect(none.status).toBe(200);
    expect(none.sessionId).toBeTruthy();
  });

  it.each(['localhost', '127.0.0.1', '[::1]'])(
    'admits Host %s with and without the port, and its Origin',
    async (name) => {
      const { url, port } = await gateway();
      for (const host of [name, `${name}:${port}`]) {
        for (const origin of [undefined, `http://${host}`, `http://${name}:3000`]) {
          const r = await send(url, { host, ...(origin ? { origin } : {}) }, initialize());
          expect({ host, origin, status: r.status }).toEqual({ host, origin, status: 200 });
          expect(r.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'flood' } } });
        }
      }
    },
  );

  it('with --allowed-hosts admits the listed name (any port, any case) besides the loopback ones, and no other', async () => {
    const { url, port } = await gateway({ allowedHosts: ['gw.example.test'] });
    const listed = await send(
      url,
      { host: `GW.example.test:${port}`, origin: 'https://gw.example.test' },
      initialize(),
    );
    expect(listed.status).toBe(200);
    expect((await send(url, { host: 'gw.example.test' }, initialize())).status).toBe(200);
    expect((await send(url, { host: `localhost:${port}` }, initialize())).status).toBe(200);
    const other = await send(url, { host: 'other.example.test' }, initialize());
    expect(other).toMatchObject({ status: 403, body: refusal('Invalid Host: other.example.test') });
    const otherOrigin = await send(url, { host: 'gw.example.test', origin: 'http://evil.example.com' }, initialize());
    expect(otherOrigin.status).toBe(403);
  });
});

describe("the conformance suite's dns-rebinding-protection", () => {
  it('its requests: Host and Origin evil.example.com refused with 4xx; its own Host and Origin accepted, initialized after', async () => {
    const { url } = await gateway();
    const evil = 'evil.example.com';
    const rejected = await send(
      url,
      { host: evil, origin: `http://${evil}`, 'mcp-protocol-version': '2025-11-25' },
      initialize(),
    );
    expect(rejected.status).toBe(403);
    // The 2026-07-28 probe (server/discover, no session) is refused the same way.
    const discover = await send(
      url,
      { host: evil, origin: `http://${evil}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: {} } },
    );
    expect(discover.status).toBe(403);

    const valid = url.host; // 127.0.0.1:PORT, as the suite takes it from the URL
    const accepted = await send(
      url,
      { host: valid, origin: `http://${valid}`, 'mcp-protocol-version': '2025-11-25' },
      initialize(),
    );
    expect(accepted.status).toBe(200);
    expect(accepted.sessionId).toBeTruthy();
    const initialized = await send(
      url,
      {
        host: valid,
        origin: `http://${valid}`,
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': accepted.sessionId!,
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    );
    expect(initialized.status).toBe(202);
  });

  it('the suite itself (0.1.16) passes it through the gateway', async () => {
    const { url } = await gateway();
    const suite = path.join(process.cwd(), 'node_modules/conformance-2025/dist/index.js');
    // Not spawnSync: the gateway answers from this process's event loop.
    const child = spawn(process.execPath, [
      suite,
      'server',
      '--url',
      url.toString(),
      '--scenario',
      'dns-rebinding-protection',
    ]);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toMatch(/\[localhost-host-rebinding-rejected\s*\] SUCCESS/);
    expect(plain).toMatch(/\[localhost-host-valid-accepted\s*\] SUCCESS/);
    expect(plain).toContain('Passed: 2/2, 0 failed');
    expect(code).toBe(0);
  }, 60_000);
});
