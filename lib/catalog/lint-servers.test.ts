// The catalog lint on two real servers from npm (pinned in devDependencies), their catalogs taken
// as a client takes them: @modelcontextprotocol/server-everything and server-filesystem, started over
// stdio, `tools/list`. The expected findings were written from their definitions by reading them
// against the rules (docs/catalog.md, "A worked example"): a new version of either server that
// changes its tools changes this test, as it should.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { lintCatalog, type ToolDefinition } from './lint';

const resolve = createRequire(import.meta.url).resolve;
const EVERYTHING = resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const allowed = mkdtempSync(path.join(os.tmpdir(), 'cs-catalog-lint-'));
afterAll(() => rmSync(allowed, { recursive: true, force: true }));

async function toolsOf(args: string[]): Promise<ToolDefinition[]> {
  const client = new Client({ name: 'catalog-lint', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  try {
    return (await client.listTools()).tools as ToolDefinition[];
  } finally {
    await client.close();
  }
}

describe('the catalog lint on real servers', () => {
  it('server-everything: a contradiction and four tools without limits', async () => {
    const tools = await toolsOf([EVERYTHING, 'stdio']);
    expect(tools.map((t) => t.name)).toContain('trigger-long-running-operation');
    const findings = lintCatalog(tools);
    expect(findings.map((f) => [f.severity, f.rule, f.tools])).toEqual([
      // readOnlyHint: true, and "Demonstrates a long running operation with progress updates.":
      // "updates" is a noun there, but the word list cannot tell.
      ['high', 'contradiction', ['trigger-long-running-operation']],
      // Not read-only, and none of only, not, never, cannot, must, requires, unless.
      ['low', 'no_constraints', ['gzip-file-as-resource']],
      ['low', 'no_constraints', ['simulate-research-query']],
      ['low', 'no_constraints', ['toggle-simulated-logging']],
      ['low', 'no_constraints', ['toggle-subscriber-updates']],
    ]);
    expect(findings[0].message).toContain('of updating');
  });

  it('server-filesystem: an order to call another tool, and two listings alike', async () => {
    const tools = await toolsOf([FILESYSTEM, allowed]);
    expect(tools.map((t) => t.name)).toContain('read_text_file');
    const findings = lintCatalog(tools);
    expect(findings.map((f) => [f.severity, f.rule, f.tools])).toEqual([
      // "DEPRECATED: Use read_text_file instead."
      ['high', 'instructions_to_model', ['read_file']],
      // 29 words shared of 33: the second adds "including" and "sizes", and has "useful" for "essential".
      ['medium', 'ambiguous_pair', ['list_directory', 'list_directory_with_sizes']],
    ]);
    expect(findings[0].message).toContain('an order to call read_text_file');
    expect(findings[1].message).toContain('share 87 % of their words');
  });
});
