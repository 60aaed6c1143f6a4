// The gateway in stdio mode in front of the real @modelcontextprotocol/server-filesystem (from npm,
// pinned in package.json) in a temporary folder, the official SDK client in front of it, and the
// real console (route handlers in-process on the real database) deciding and recording.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { argsDigest } from '@/lib/mcp/digest';
import { runStdio, type StdioGateway } from './stdio';
import { uniq } from '@/testing/factories';
import {
  consoleActors,
  decide,
  linkedClient,
  recordsOf,
  testContext,
  type ConsoleActors,
  closedAfterEach,
} from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const FS_BIN = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});

const open = closedAfterEach();

async function setUp(over: Parameters<typeof testContext>[2] = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'cs-gateway-'));
  const server = uniq('fs-mcp');
  await trustServer(cli, server);
  const t = testContext(actors, server, over);
  const { client, down, connect } = linkedClient();
  const stdio: StdioGateway = await runStdio(t.ctx, [process.execPath, FS_BIN, dir], down);
  await connect();
  open.push(async () => {
    await client.close();
    await stdio.close();
    await t.ctx.reporter.close(2000);
    await rm(dir, { recursive: true, force: true });
  });
  return { ...t, dir, server, client, stdio };
}

const call = (
  client: Client,
  name: string,
  args: Record<string, unknown>,
  ref: string,
  extra: Record<string, unknown> = {},
) =>
  client.callTool({
    name,
    arguments: args,
    _meta: { 'countersign/requestRef': ref, ...extra },
  }) as Promise<CallToolResult>;
const csError = (r: CallToolResult) => (r._meta as Record<string, unknown> | undefined)?.['countersign/error'];

describe('gateway, stdio, server-filesystem', () => {
  it('a read goes through at once and is recorded completed', async () => {
    const s = await setUp();
    await writeFile(join(s.dir, 'a.txt'), 'hello from disk');
    const ref = uniq('req');
    const r = await call(s.client, 'read_text_file', { path: join(s.dir, 'a.txt') }, ref);
    expect(r.isError).toBeFalsy();
    expect(JSON.stringify(r.content)).toContain('hello from disk');
    expect(r._meta?.['countersign/requestRef']).toBe(ref);
    expect(r._meta?.['countersign/eventId']).toMatch(/^evt_/);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records).toMatchObject([
      { toolName: 'read_text_file', delivery: 'completed', category: 'ok', grantId: null },
    ]);
    expect(records[0].eventId).toBe(r._meta?.['countersign/eventId']);
  });

  it('write_file is held, approved by a reviewer through the API, forwarded once, recorded with its grant; the same call again does not write', async () => {
    const s = await setUp();
    const file = join(s.dir, 'note.txt');
    const args = { path: file, content: 'approved content' };
    const ref = uniq('req');
    const progress: number[] = [];
    const pending = s.client.callTool(
      { name: 'write_file', arguments: args, _meta: { 'countersign/requestRef': ref } },
      undefined,
      { onprogress: (p) => void progress.push(p.progress), timeout: 20_000 },
    ) as Promise<CallToolResult>;
    await new Promise((r) => setTimeout(r, 300));
    await expect(readFile(file, 'utf8')).rejects.toThrow(); // held: not written yet
    await decide(actors.reviewer, ref, 'approve');
    const r = await pending;
    expect(r.isError).toBeFalsy();
    expect(await readFile(file, 'utf8')).toBe('approved content');
    expect(progress.length).toBeGreaterThan(0);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      toolName: 'write_file',
      delivery: 'completed',
      category: 'ok',
      argsDigest: argsDigest(args),
    });
    expect(records[0].grantId).toEqual(expect.any(String));

    // Someone changes the file; the identical call again must not overwrite it without a new approval.
    await writeFile(file, 'changed since');
    const again = await call(s.client, 'write_file', args, ref);
    expect(again.isError).toBe(true);
    // The guards: the same write completed in this request (docs/design.md's table, row 2).
    expect(csError(again)).toMatchObject({ category: 'already_done', retry: 'no' });
    expect(again.structuredContent).toBeUndefined();
    expect(await readFile(file, 'utf8')).toBe('changed since');
    // A new operation (its own idempotency key) asks anew.
    const fresh = call(s.client, 'write_file', args, ref, { 'countersign/idempotencyKey': uniq('op') });
    await decide(actors.reviewer, ref, 'approve');
    expect((await fresh).isError).toBeFalsy();
    expect(await readFile(file, 'utf8')).toBe('approved content');
  });

  it('a denied write leaves the file untouched and answers denied', async () => {
    const s = await setUp();
    const file = join(s.dir, 'keep.txt');
    await writeFile(file, 'original');
    const ref = uniq('req');
    const pending = call(s.client, 'write_file', { path: file, content: 'overwritten' }, ref);
    await decide(actors.reviewer, ref, 'deny');
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(csError(r)).toMatchObject({ category: 'denied', retry: 'no', approvalId: expect.any(String) });
    expect(await readFile(file, 'utf8')).toBe('original');
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records).toMatchObject([{ delivery: 'never_sent', grantId: null }]);
  });

  it('no decision within --approval-wait: not forwarded, approval_required with the approval and its link', async () => {
    const s = await setUp({ approvalWaitMs: 400 });
    const file = join(s.dir, 'wait.txt');
    const r = await call(s.client, 'write_file', { path: file, content: 'x' }, uniq('req'));
    expect(csError(r)).toMatchObject({
      category: 'approval_required',
      retry: 'after_approval',
      approvalId: expect.any(String),
      approvalUrl: expect.stringMatching(/^http:\/\/countersign\.test\/approvals\//),
    });
    await expect(readFile(file, 'utf8')).rejects.toThrow();
  });

  it('the console down: reads still work, writes fail closed with unavailable', async () => {
    const s = await setUp();
    await writeFile(join(s.dir, 'b.txt'), 'still readable');
    const ref = uniq('req');
    await call(s.client, 'read_text_file', { path: join(s.dir, 'b.txt') }, ref); // policy known
    s.console.down();
    await new Promise((r) => setTimeout(r, 3100)); // past the policy cache
    const read = await call(s.client, 'read_text_file', { path: join(s.dir, 'b.txt') }, ref);
    expect(JSON.stringify(read.content)).toContain('still readable');
    const write = await call(s.client, 'write_file', { path: join(s.dir, 'c.txt'), content: 'x' }, ref);
    expect(csError(write)).toMatchObject({ category: 'unavailable', retry: 'backoff' });
    await expect(readFile(join(s.dir, 'c.txt'), 'utf8')).rejects.toThrow();
    s.console.up();
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => r.delivery)).toEqual(['completed', 'completed', 'never_sent']);
  });

  it('the console down from the start (no policy answer ever): a read still works, a write fails closed with unavailable', async () => {
    const s = await setUp();
    s.console.down();
    await writeFile(join(s.dir, 'd.txt'), 'read before any policy answer');
    const ref = uniq('req');
    const read = await call(s.client, 'read_text_file', { path: join(s.dir, 'd.txt') }, ref);
    expect(read.isError).toBeFalsy();
    expect(JSON.stringify(read.content)).toContain('read before any policy answer');
    expect(csError(read)).toBeUndefined();
    const write = await call(s.client, 'write_file', { path: join(s.dir, 'e.txt'), content: 'x' }, ref);
    expect(write.isError).toBe(true);
    expect(csError(write)).toMatchObject({ category: 'unavailable', retry: 'backoff' });
    await expect(readFile(join(s.dir, 'e.txt'), 'utf8')).rejects.toThrow();
    s.console.up(); // the buffered records arrive once it is back
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery])).toEqual([
      ['read_text_file', 'completed'],
      ['write_file', 'never_sent'],
    ]);
  });

  it('a blocked tool is left out of tools/list and refused denied_by_policy, recorded never_sent', async () => {
    const s = await setUp();
    await setPolicyRule(cli, { server: s.server, tool: 'write_file', requiredApprovals: 'blocked' });
    const { tools } = await s.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('read_text_file');
    expect(names).not.toContain('write_file');
    const ref = uniq('req');
    const file = join(s.dir, 'never.txt');
    const r = await call(s.client, 'write_file', { path: file, content: 'x' }, ref);
    expect(csError(r)).toMatchObject({ category: 'denied_by_policy', retry: 'no' });
    await expect(readFile(file, 'utf8')).rejects.toThrow();
    expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([
      { delivery: 'never_sent', category: 'denied_by_policy' },
    ]);
  });

  it("the server's own errors arrive as without the gateway (unknown tool, invalid arguments)", async () => {
    const s = await setUp();
    const ref = uniq('req');
    const unknown = await call(s.client, 'no_such_tool', {}, ref);
    expect(unknown.isError).toBe(true);
    expect(csError(unknown)).toBeUndefined();
    const invalid = await call(s.client, 'read_text_file', { path: 42 }, ref);
    expect(invalid.isError).toBe(true);
    expect(csError(invalid)).toBeUndefined();
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => r.delivery)).toEqual(['rejected', 'rejected']);
  });
});
