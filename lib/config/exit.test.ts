// A bad value stops `npm start` (scripts/start.ts) and the CLI before they do anything: exit 1, the
// one line naming the variable, no stack trace; the gateway the same way, with its exit code for
// what it was started with (2). Spawned as `npm start` and `npm run cli` spawn them (no build, no
// database: the configuration is their first step).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnvironment } from '.';

const run = async (script: string, args: string[], env: Record<string, string>) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=react-server', script, ...args],
      { env: childEnvironment(env), timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

const TIMEOUT =
  'DATABASE_QUERY_TIMEOUT_MS: "ten" is not a number; expected a whole number of milliseconds ≥ 1 (default 15000). ' +
  'Check this environment variable (docs/configuration.md).';

describe.concurrent('a bad value at start', { timeout: 90_000 }, () => {
  it('stops `npm start` with exit 1 and one line', async () => {
    const r = await run('scripts/start.ts', [], { DATABASE_QUERY_TIMEOUT_MS: 'ten' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`[start] configuration error: ${TIMEOUT}\n`);
    expect(r.stdout).toBe('');
  });

  it('stops the CLI with exit 1 and one line, whatever the command', async () => {
    const r = await run('scripts/cli.ts', ['audit:verify'], { DATABASE_QUERY_TIMEOUT_MS: 'ten' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`Configuration error: ${TIMEOUT}\n`);
    expect(r.stdout).toBe('');
  });

  it('stops the gateway with exit 2 and one line, for its own variables only', async () => {
    const r = await run('scripts/gateway.ts', ['--server', 's', '--principal', 'p', '--organization', 'o', '--', 'x'], {
      COUNTERSIGN_URL: 'countersign.example.com',
      COUNTERSIGN_API_KEY: 'cs_live_test',
      DATABASE_QUERY_TIMEOUT_MS: 'ten',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'countersign-gateway: configuration error: COUNTERSIGN_URL: "countersign.example.com" is not an http(s) URL; ' +
        'expected e.g. https://countersign.example.com. Check this environment variable (docs/configuration.md).\n',
    );
    expect(r.stdout).toBe('');
  });
});
