import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { uniq } from '@/testing/factories';
import { childEnvironment } from '@/lib/config';

const exec = promisify(execFile);

// The real CLI, in a child process, against this file's own database.
const cli = (...args: string[]) => cliWith({}, ...args);

async function cliWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(
      'node_modules/.bin/tsx',
      ['--conditions=react-server', 'scripts/cli.ts', ...args],
      { env: childEnvironment(env) },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// Each case spawns the CLI, some of them several times in a row (1–3 s of start-up each, most of
// it tsx and module loading): the cases run side by side, each on names of its own, with room for
// a busy machine (five at once on two cores).
describe.concurrent('npm run cli', { timeout: 90_000 }, () => {
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
      [
        ['--email', 'a@example.test', '--role', 'admin', '--password', 'short'],
        /--password: must be at least 12 characters/,
      ],
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
    const r = await cli(
      'apikeys:create',
      '--name',
      'gw',
      '--scopes',
      'outcomes:write,grants:redeem',
      '--organization',
      'acme',
    );
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

  it('policy:set creates a rule for a tool or a whole server, and changes it', async () => {
    const server = uniq('pol-mcp');
    const tool = await cli('policy:set', '--server', server, '--tool', 'refund_payment', '--approvals', '2');
    expect(tool.code).toBe(0);
    expect(tool.stdout).toMatch(
      new RegExp(`Policy rule: refund_payment on ${server} needs 2 approvals \\(rule [0-9a-f-]{36}, set by cli\\)`),
    );
    const whole = await cli('policy:set', '--server', server, '--approvals', '0');
    expect(whole.code).toBe(0);
    expect(whole.stdout).toContain(`Policy rule: every tool of ${server} needs no approval`);
    const changed = await cli('policy:set', '--server', server, '--tool', 'refund_payment', '--approvals', '1');
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain(`refund_payment on ${server} needs 1 approval (`);
    const blocked = await cli('policy:set', '--server', server, '--tool', 'drop_table', '--approvals', 'blocked');
    expect(blocked.code).toBe(0);
    expect(blocked.stdout).toContain(`drop_table on ${server} is blocked (not exposed, never called)`);

    // Stored as the approval policy reads it, with an audit entry for each change.
    const { db } = await import('@/lib/server/db/db');
    const rules = await db.policyRule.findMany({
      where: { server },
      orderBy: { toolName: 'asc' },
      select: { toolName: true, requiredApprovals: true, blocked: true, createdBy: true },
    });
    expect(rules).toEqual([
      { toolName: '*', requiredApprovals: 0, blocked: false, createdBy: 'cli' },
      { toolName: 'drop_table', requiredApprovals: 2, blocked: true, createdBy: 'cli' },
      { toolName: 'refund_payment', requiredApprovals: 1, blocked: false, createdBy: 'cli' },
    ]);
    const audit = await db.auditEntry.findMany({
      where: { targetType: 'policy_rule', actor: 'cli', data: { path: ['server'], equals: server } },
      select: { action: true },
      orderBy: { seq: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual(['policy.create', 'policy.create', 'policy.change', 'policy.create']);
  });

  it('policy:set --show names the argument fields a tool shows in the queue, with --approvals or alone, and clears them', async () => {
    const server = uniq('pol-show');
    const args = ['policy:set', '--server', server, '--tool', 'refund_payment'];
    const named = await cli(...args, '--approvals', '1', '--show', 'amount, order.currency');
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toMatch(
      new RegExp(
        `^Policy rule: refund_payment on ${server} needs 1 approval \\(rule [0-9a-f-]{36}, set by cli\\); its queue rows show amount, order\\.currency$`,
        'm',
      ),
    );
    const alone = await cli(...args, '--show', 'order_id');
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toContain(`refund_payment on ${server} needs 1 approval (`);
    expect(alone.stdout).toMatch(/set by cli\); its queue rows show order_id$/m);
    const cleared = await cli(...args, '--show', '');
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toMatch(/set by cli\); its queue rows show the first three scalar fields$/m);

    const { db } = await import('@/lib/server/db/db');
    const rows = await db.$queryRaw<{ required_approvals: number; show_fields: string[] | null }[]>`
      SELECT required_approvals, show_fields FROM policy_rules WHERE server = ${server}`;
    expect(rows).toEqual([{ required_approvals: 1, show_fields: null }]);
    const audit = await db.auditEntry.findMany({
      where: { targetType: 'policy_rule', actor: 'cli', data: { path: ['server'], equals: server } },
      select: { action: true, data: true },
      orderBy: { seq: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual(['policy.create', 'policy.change', 'policy.change']);
    expect(audit[1].data).toEqual({
      server,
      tool: 'refund_payment',
      showFields: { from: ['amount', 'order.currency'], to: ['order_id'] },
    });
  });

  it("policy:set sets a rule's budgets with --approvals or alone, clears one with '', and audits each change", async () => {
    const server = uniq('pol-budget');
    const args = ['policy:set', '--server', server, '--tool', 'refund_payment'];
    const created = await cli(...args, '--approvals', '1', '--failed-attempts', '3', '--backoff-base-ms', '500');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(
      new RegExp(
        `^Policy rule: refund_payment on ${server} needs 1 approval \\(rule [0-9a-f-]{36}, set by cli\\); budgets: 3 failed attempts, backoff base 500 ms \\(--calls inherited\\)$`,
        'm',
      ),
    );
    const alone = await cli(...args, '--calls', '40', '--failed-attempts', '');
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(
      /needs 1 approval \(rule [0-9a-f-]{36}, set by cli\); budgets: 40 calls, backoff base 500 ms \(--failed-attempts inherited\)$/m,
    );
    // On a whole server too; all cleared reads as inherited.
    const whole = await cli('policy:set', '--server', server, '--approvals', '0', '--calls', '100000');
    expect(whole.stdout).toContain(`every tool of ${server} needs no approval (`);
    expect(whole.stdout).toMatch(/; budgets: 100000 calls \(--failed-attempts, --backoff-base-ms inherited\)$/m);
    const cleared = await cli('policy:set', '--server', server, '--calls', '');
    expect(cleared.stdout).toMatch(/set by cli\); every budget inherited$/m);

    const { db } = await import('@/lib/server/db/db');
    const rows = await db.$queryRaw<
      {
        tool_name: string;
        required_approvals: number;
        failed_attempts_budget: number | null;
        call_budget: number | null;
        backoff_base_ms: number | null;
      }[]
    >`SELECT tool_name, required_approvals, failed_attempts_budget, call_budget, backoff_base_ms
      FROM policy_rules WHERE server = ${server} ORDER BY tool_name`;
    expect(rows).toEqual([
      { tool_name: '*', required_approvals: 0, failed_attempts_budget: null, call_budget: null, backoff_base_ms: null },
      {
        tool_name: 'refund_payment',
        required_approvals: 1,
        failed_attempts_budget: null,
        call_budget: 40,
        backoff_base_ms: 500,
      },
    ]);
    const audit = await db.auditEntry.findMany({
      where: { targetType: 'policy_rule', actor: 'cli', data: { path: ['server'], equals: server } },
      select: { action: true, data: true },
      orderBy: { seq: 'asc' },
    });
    expect(audit.map((a) => a.data)).toEqual([
      { server, tool: 'refund_payment', requiredApprovals: 1, budgets: { failedAttempts: 3, backoffBaseMs: 500 } },
      {
        server,
        tool: 'refund_payment',
        budgets: { failedAttempts: { from: 3, to: null }, calls: { from: null, to: 40 } },
      },
      { server, tool: null, requiredApprovals: 0, budgets: { calls: 100000 } },
      { server, tool: null, budgets: { calls: { from: 100000, to: null } } },
    ]);
    expect(audit.map((a) => a.action)).toEqual(['policy.create', 'policy.change', 'policy.create', 'policy.change']);
  });

  // Two tests of a few cases each: every case is a child process.
  const refusesPolicy = (name: string, cases: (server: string) => [string[], RegExp][]) =>
    it(`policy:set refuses ${name} with a message naming the option, and stores nothing`, async () => {
      const server = uniq('pol-bad');
      for (const [args, message] of cases(server)) {
        const r = await cli('policy:set', ...args);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stdout).not.toContain('Policy rule:');
      }
      const { db } = await import('@/lib/server/db/db');
      expect(await db.policyRule.count({ where: { server } })).toBe(0);
    });

  refusesPolicy('a bad approval count', (server) => [
    [['--server', server, '--approvals', '3'], /--approvals: must be 0, 1, 2 or blocked/],
    [['--server', server, '--approvals=-1'], /--approvals: must be 0, 1, 2 or blocked/],
    [['--server', server, '--approvals', 'two'], /--approvals: must be 0, 1, 2 or blocked/],
    [['--server', server, '--approvals', ''], /--approvals: must be 0, 1, 2 or blocked/],
    [['--server', server, '--approvals', '1.5'], /--approvals: must be 0, 1, 2 or blocked/],
    [['--server', server, '--approvals', 'Blocked'], /--approvals: must be 0, 1, 2 or blocked/],
    [['--server', server, '--approvals', 'blocked,1'], /--approvals: must be 0, 1, 2 or blocked/],
  ]);

  refusesPolicy('a missing or bad server, tool or option', (server) => [
    [['--server', server], /--approvals: is required/],
    [['--approvals', '1'], /--server: is required/],
    [['--server', '   ', '--approvals', '1'], /--server: is required/],
    [['--server', server, '--tool', '*', '--approvals', '1'], /--tool: must not contain \*/],
    [['--server', server, '--approvals', '1', '--tols', 'x'], /Unknown option '--tols'/],
  ]);

  refusesPolicy('bad fields to show', (server) => {
    const tool = ['--server', server, '--tool', 'refund_payment'];
    const eleven = Array.from({ length: 11 }, (_, i) => `field${i}`).join(',');
    return [
      [[...tool, '--approvals', '1', '--show', 'amount,,currency'], /--show: must not have an empty entry/],
      [[...tool, '--approvals', '1', '--show', 'amount,'], /--show: must not have an empty entry/],
      [[...tool, '--approvals', '1', '--show', eleven], /--show: must name at most 10 fields/],
      [[...tool, '--approvals', '1', '--show', 'x'.repeat(101)], /--show: must name fields of at most 100 characters/],
      [[...tool, '--approvals', '1', '--show', 'amount,amount'], /--show: names a field twice/],
      [['--server', server, '--approvals', '1', '--show', 'amount'], /--show: needs a tool/],
      [
        [...tool, '--show', 'amount'],
        /No rule for refund_payment on \S+ yet[\s\S]*--approvals: is required for a new rule/,
      ],
    ];
  });

  refusesPolicy('a bad budget', (server) => {
    const rule = ['--server', server, '--approvals', '1'];
    const attempts = /--failed-attempts: must be a whole number from 1 to 1000 \(empty: inherit\)/;
    const calls = /--calls: must be a whole number from 1 to 100000 \(empty: inherit\)/;
    const backoff = /--backoff-base-ms: must be a whole number from 100 to 60000 \(empty: inherit\)/;
    return [
      [[...rule, '--failed-attempts', 'five'], attempts],
      [[...rule, '--failed-attempts', '0'], attempts],
      [[...rule, '--failed-attempts=-3'], attempts],
      [[...rule, '--calls', '100001'], calls],
      [[...rule, '--calls', '99999999999999999999'], calls],
      [[...rule, '--calls', '2.5'], calls],
      [[...rule, '--backoff-base-ms', '1e3'], backoff],
      [[...rule, '--backoff-base-ms=-100'], backoff],
      [[...rule, '--backoff-base-ms', '60001'], backoff],
      [
        ['--server', server, '--tool', 'refund_payment', '--calls', '10'],
        /No rule for refund_payment on \S+ yet[\s\S]*--approvals: is required for a new rule/,
      ],
    ];
  });

  it('audit:verify reports an intact chain with its head', async () => {
    const r = await cli('audit:verify');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Audit chain intact: \d+ entries, head sha256:[0-9a-f]{64}/);
  });

  it('retention:purge deletes the records past the period, says what it did, and audits it', async () => {
    const { db } = await import('@/lib/server/db/db');
    const [old, recent] = [uniq('cli-old'), uniq('cli-recent')];
    // Rows as ingestion stores them, received 91 days and 1 day ago.
    for (const [ref, days] of [
      [old, 91],
      [recent, 1],
    ] as const) {
      await db.$executeRaw`
        INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal, server, tool_name,
          observed, boundary, delivery, category, retry, read_only, what_happened, next_step, classifier_version,
          annotations_trusted, content_hash, received_at)
        SELECT gen_random_uuid(), ${ref} || '-' || i, now(), ${ref}, 'acme', 'user_193', 'billing-mcp', 'get_order',
          '{"sent":true}'::jsonb, 'none', 'completed', 'ok', 'no', true, 'done', 'nothing', 1,
          true, 'h', now() - make_interval(days => ${days}::int)
        FROM generate_series(1, 3) i`;
    }
    const r = await cli('retention:purge');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^Purged 3 outcome records received before \d{4}-\d\d-\d\dT[\d:.]+Z \(90 days\) in 1 batch\.$/m,
    );
    expect(await db.outcomeRecord.count({ where: { requestRef: old } })).toBe(0);
    expect(await db.outcomeRecord.count({ where: { requestRef: recent } })).toBe(3);
    const entry = await db.auditEntry.findFirst({ where: { action: 'outcomes.purge' }, orderBy: { seq: 'desc' } });
    expect(entry).toMatchObject({ actor: 'cli', data: { deleted: 3, kept: 0, batches: 1, completed: true } });

    const again = await cli('retention:purge');
    expect(again.stdout).toMatch(/^Nothing to purge: no outcome records received before \S+ \(90 days\)\.$/m);
    const shorter = await cliWith({ OUTCOME_RETENTION_DAYS: '1' }, 'retention:purge');
    expect(shorter.stdout).toContain('Purged 3 outcome records');
  });

  it('retention:purge refuses a bad OUTCOME_RETENTION_DAYS before opening the database, and says when it is off', async () => {
    // A configuration failure (lib/config), as for every variable: exit 1, one line naming it.
    const bad = await cliWith({ OUTCOME_RETENTION_DAYS: '0' }, 'retention:purge');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'Configuration error: OUTCOME_RETENTION_DAYS must be a whole number of days from 1 to 36500, or "off"',
    );
    const off = await cliWith({ OUTCOME_RETENTION_DAYS: 'off' }, 'retention:purge');
    expect(off.code).toBe(0);
    expect(off.stdout).toContain(
      'Retention is off (OUTCOME_RETENTION_DAYS=off): outcome records are kept forever; nothing purged.',
    );
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
