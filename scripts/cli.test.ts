import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { uniq } from '@/lib/server/testing';

const exec = promisify(execFile);

// The real CLI, in a child process, against this file's own database.
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('node_modules/.bin/tsx', ['--conditions=react-server', 'scripts/cli.ts', ...args], { env: process.env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm run cli', () => {
  it('users:create creates a user, generating a password when none is given', async () => {
    const email = `${uniq('cli')}@example.test`;
    const r = await cli('users:create', '--email', email, '--role', 'reviewer', '--principal', 'user_42');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Created reviewer ${email} (principal user_42`);
    expect(r.stdout).toMatch(/Password: \S{12,}/);
  });

  it('users:create refuses bad input with a message naming the option', async () => {
    const cases: [string[], RegExp][] = [
      [['--email', 'not-an-email', '--role', 'admin'], /--email: must be an email address/],
      [['--email', 'a@example.test', '--role', 'root'], /--role: must be reviewer, support or admin/],
      [['--email', 'a@example.test', '--role', 'admin', '--password', 'short'], /--password: must be at least 12 characters/],
      [['--role', 'admin'], /--email/],
    ];
    for (const [args, message] of cases) {
      const r = await cli('users:create', ...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });

  it('users:create refuses a duplicate email', async () => {
    const email = `${uniq('cli')}@example.test`;
    expect((await cli('users:create', '--email', email, '--role', 'support')).code).toBe(0);
    const again = await cli('users:create', '--email', email, '--role', 'support');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
  });

  it('tokens:create prints a personal token once, and refuses an unknown user', async () => {
    const email = `${uniq('cli')}@example.test`;
    await cli('users:create', '--email', email, '--role', 'support');
    const r = await cli('tokens:create', '--email', email);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^cs_pat_[A-Za-z0-9_-]{43}$/m);
    const unknown = await cli('tokens:create', '--email', `nobody-${email}`);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--email: no user with the email');
  });

  it('apikeys:create prints a key with its scopes, and refuses unknown scopes', async () => {
    const r = await cli('apikeys:create', '--name', 'gw', '--scopes', 'outcomes:write,grants:redeem', '--organization', 'acme');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('scopes outcomes:write, grants:redeem for organization acme');
    expect(r.stdout).toMatch(/^cs_live_[A-Za-z0-9_-]{43}$/m);
    const bad = await cli('apikeys:create', '--name', 'gw', '--scopes', 'outcomes:write,root');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--scopes/);
    const none = await cli('apikeys:create', '--name', 'gw');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--scopes: choose at least one scope');
  });

  it('servers:trust trusts a server once and refuses a bad name', async () => {
    const r = await cli('servers:trust', '--name', 'billing-mcp');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Trusted server billing-mcp');
    const bad = await cli('servers:trust', '--name', 'has spaces');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--name');
  });

  it('audit:verify reports an intact chain with its head', async () => {
    const r = await cli('audit:verify');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Audit chain intact: \d+ entries, head sha256:[0-9a-f]{64}/);
  });

  it('an unknown command or option exits non-zero with usage', async () => {
    const r = await cli('users:delete');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown command "users:delete"');
    const opt = await cli('servers:trust', '--nmae', 'x');
    expect(opt.code).toBe(2);
    expect(opt.stderr).toMatch(/Unknown option '--nmae'/);
  });
});
