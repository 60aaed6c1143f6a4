// The catalogs of the two reference servers from npm, @modelcontextprotocol/server-everything and
// server-filesystem (pinned in devDependencies), through the gateway (issue #44): each started over
// stdio behind the gateway, the gateway wired to the real console (route handlers in-process on the
// real database, a real API key), an SDK client's `tools/list` through it, then the console's catalog
// as an admin reads it (`listTools`). The expected tools and findings are written by hand from
// docs/catalog.md, "A worked example" (lib/catalog/lint-servers.test.ts checks the same findings on
// the servers' own listing): a new version of either server that changes its tools changes this test.
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Person } from '@/lib/auth/actor';
import { listTools, type ToolCatalog } from '@/lib/server/catalog/catalog';
import { makeUser, uniq, value } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  linkedClient,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { runStdio } from './stdio';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const resolve = createRequire(import.meta.url).resolve;
const EVERYTHING = resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const EVALUATE = '/api/v1/policy/evaluate';

let actors: ConsoleActors;
let admin: Person;
beforeAll(async () => {
  actors = await consoleActors();
  admin = await makeUser('admin');
});
const open = closedAfterEach();

/** The gateway over stdio in front of `command`, for a server of a new name, and an SDK client through it. */
async function throughGateway(command: string[]) {
  const server = uniq('reference-mcp');
  const t = testContext(actors, server);
  const { client, down, connect } = linkedClient();
  const gateway = await runStdio(t.ctx, [process.execPath, ...command], down);
  await connect();
  open.push(async () => {
    await client.close();
    await gateway.close();
    await t.ctx.reporter.close(2000);
  });
  const evaluated = () => t.console.calls.filter((c) => c.method === 'POST' && c.path === EVALUATE).length;
  return { server, client, evaluated };
}

/** The console's catalog of `server`, as an admin reads it. */
async function catalogOf(server: string): Promise<ToolCatalog> {
  return value(await listTools(admin, server));
}

const findingsOf = (catalog: ToolCatalog) => catalog.lint.map((f) => [f.severity, f.rule, f.tools]);
const accepted = (catalog: ToolCatalog) =>
  Object.fromEntries(catalog.tools.map((t) => [t.name, t.accepted?.definitionHash]));

describe('the reference servers through the gateway, as the console pins and lints them', () => {
  it('server-everything: 13 tools accepted, none held; a contradiction and four tools without limits; a second listing changes nothing', async () => {
    const { server, client, evaluated } = await throughGateway([EVERYTHING, 'stdio']);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(evaluated()).toBeGreaterThanOrEqual(1);

    const catalog = await catalogOf(server);
    const names = [
      'echo',
      'get-annotated-message',
      'get-env',
      'get-resource-links',
      'get-resource-reference',
      'get-structured-content',
      'get-sum',
      'get-tiny-image',
      'gzip-file-as-resource',
      'simulate-research-query',
      'toggle-simulated-logging',
      'toggle-subscriber-updates',
      'trigger-long-running-operation',
    ];
    expect([...listed].sort()).toEqual(names);
    expect(catalog.tools.map((t) => t.name).sort()).toEqual(names);
    expect(catalog.tools.filter((t) => t.held)).toEqual([]);
    expect(catalog.tools.filter((t) => !t.accepted)).toEqual([]);
    expect(findingsOf(catalog)).toEqual([
      ['high', 'contradiction', ['trigger-long-running-operation']],
      ['low', 'no_constraints', ['gzip-file-as-resource']],
      ['low', 'no_constraints', ['simulate-research-query']],
      ['low', 'no_constraints', ['toggle-simulated-logging']],
      ['low', 'no_constraints', ['toggle-subscriber-updates']],
    ]);
    expect(catalog.lint[0].message).toContain('of updating');

    // A second listing, once the gateway's cached answer (3 s) is stale: asked of the console again,
    // the same definitions, nothing held, the same hashes accepted at the same time.
    const before = evaluated();
    await new Promise((r) => setTimeout(r, 3500));
    const again = (await client.listTools()).tools.map((t) => t.name);
    expect([...again].sort()).toEqual(names);
    expect(evaluated()).toBeGreaterThan(before);
    const after = await catalogOf(server);
    expect(after.tools.filter((t) => t.held)).toEqual([]);
    expect(accepted(after)).toEqual(accepted(catalog));
    expect(after.tools.map((t) => t.accepted?.acceptedAt)).toEqual(catalog.tools.map((t) => t.accepted?.acceptedAt));
    expect(findingsOf(after)).toEqual(findingsOf(catalog));
  }, 90_000);

  it('server-filesystem: 14 tools accepted, none held; an order to call another tool, and two tools alike', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cs-reference-catalog-'));
    open.push(() => rm(dir, { recursive: true, force: true }));
    const { server, client, evaluated } = await throughGateway([FILESYSTEM, dir]);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(evaluated()).toBeGreaterThanOrEqual(1);

    const catalog = await catalogOf(server);
    const names = [
      'create_directory',
      'directory_tree',
      'edit_file',
      'get_file_info',
      'list_allowed_directories',
      'list_directory',
      'list_directory_with_sizes',
      'move_file',
      'read_file',
      'read_media_file',
      'read_multiple_files',
      'read_text_file',
      'search_files',
      'write_file',
    ];
    expect([...listed].sort()).toEqual(names);
    expect(catalog.tools.map((t) => t.name).sort()).toEqual(names);
    expect(catalog.tools.filter((t) => t.held)).toEqual([]);
    expect(catalog.tools.filter((t) => !t.accepted)).toEqual([]);
    expect(findingsOf(catalog)).toEqual([
      ['high', 'instructions_to_model', ['read_file']],
      ['medium', 'ambiguous_pair', ['list_directory', 'list_directory_with_sizes']],
    ]);
    expect(catalog.lint[0].message).toContain('an order to call read_text_file');
    expect(catalog.lint[1].message).toContain('share 87 % of their words');
  }, 90_000);
});
