// `npm run cli -- <command>`: bootstrap and operations against the configured database
// (DATABASE_URL, or the embedded cluster, running or not).
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { resolveDatabase } from './lib/database';
import { applyMigrations } from './lib/migrations';
import { createUserSchema, emailSchema } from '@/lib/users/schemas';
import { createApiKeySchema } from '@/lib/credentials/schemas';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';
import { policyRuleSchema } from '@/lib/approvals/schemas';
import { acceptToolSchema, toolsQuerySchema } from '@/lib/catalog/schemas';
import { RETENTION_ENV } from '@/lib/outcomes/retention';
import { config, configFailure, setEnvironment } from '@/lib/config';
import { randomBytes } from 'node:crypto';
import { auditName, cli } from '@/lib/auth/actor';

const usage = `Usage: npm run cli -- <command> [options]

  users:create   --email E --role reviewer|support|admin [--password P] [--principal ID] [--name N]
  tokens:create  --email E [--name N]                 prints a personal token once
  apikeys:create --name N --scopes a,b [--organization O]   prints the key once
  servers:trust  --name S                             annotations from S are trusted
  servers:set    --name S --hold-new-tools on|off     whether tools first seen on S wait for an admin too
  tools:lint     --server S                           the lint of S's tool definitions; exits 1 on a high-severity finding
  tools:accept   --server S --tool T [--hash H]       accepts T's held definition (the one with hash H, if given)
  policy:set     --server S [--tool T] --approvals 0|1|2|blocked   approvals a server's tool (or all its tools) needs
                 [--show a,b]   argument fields its queue rows show ('' clears; alone, on an existing rule)
                 [--failed-attempts N] [--calls N] [--backoff-base-ms N]   the guards' budgets per request
                                reference (1-1000, 1-100000, 100-60000; '' inherits again; alone, on an existing rule)
  audit:verify                                        recomputes the audit chain
  outcomes:reclassify [--batch N]                     re-derives stored classifications with the current classifier
  retention:purge                                     deletes outcome records older than ${RETENTION_ENV} (default 90 days)`;

class UsageError extends Error {}

/** Parses with the shared schema; `options` names the command-line option of a schema field when they differ. */
function parse<T extends z.ZodType>(schema: T, input: unknown, options: Record<string, string> = {}): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new UsageError(
    result.error.issues
      .map((i) => {
        const field = String(i.path[0] ?? '?');
        return `--${options[field] ?? field}: ${i.message}`;
      })
      .join('\n'),
  );
}

function failWith(failure: { failure: string; detail?: string }): never {
  throw new UsageError(failure.detail ?? failure.failure);
}

// With --show or budgets alone, only they change (on a rule that exists): no count to give.
const policyChangeSchema = policyRuleSchema.extend({
  requiredApprovals: policyRuleSchema.shape.requiredApprovals.optional(),
});

// The options of the budgets, by the schema field each one sets.
const budgetOptions = { failedAttempts: 'failed-attempts', calls: 'calls', backoffBaseMs: 'backoff-base-ms' } as const;
const policyOptions: Record<string, string> = { requiredApprovals: 'approvals', ...budgetOptions };

function policyRuleInput(values: {
  server?: string;
  tool?: string;
  approvals?: string;
  show?: string;
  'failed-attempts'?: string;
  calls?: string;
  'backoff-base-ms'?: string;
}) {
  const budgets = {
    failedAttempts: values['failed-attempts'],
    calls: values.calls,
    backoffBaseMs: values['backoff-base-ms'],
  };
  // The schema coerces, so "" would read as 0: only a plain count is a count here.
  if (
    values.approvals === undefined &&
    values.show === undefined &&
    Object.values(budgets).every((b) => b === undefined)
  )
    throw new UsageError('--approvals: is required (0, 1, 2 or blocked)');
  if (values.approvals !== undefined && !/^\s*(\d+|blocked)\s*$/.test(values.approvals))
    throw new UsageError('--approvals: must be 0, 1, 2 or blocked');
  return parse(
    policyChangeSchema,
    {
      server: values.server ?? '',
      tool: values.tool,
      requiredApprovals: values.approvals?.trim(),
      show: values.show,
      ...budgets,
    },
    policyOptions,
  );
}

/** A rule's budgets as the command line says them back: each set one, and which are inherited. */
function describeBudgets(budgets: Record<keyof typeof budgetOptions, number | null>): string {
  const said = [
    budgets.failedAttempts === null ? null : `${budgets.failedAttempts} failed attempts`,
    budgets.calls === null ? null : `${budgets.calls} calls`,
    budgets.backoffBaseMs === null ? null : `backoff base ${budgets.backoffBaseMs} ms`,
  ].filter((b) => b !== null);
  const inherited = (Object.keys(budgetOptions) as (keyof typeof budgetOptions)[])
    .filter((k) => budgets[k] === null)
    .map((k) => `--${budgetOptions[k]}`);
  if (!said.length) return '; every budget inherited';
  return `; budgets: ${said.join(', ')}${inherited.length ? ` (${inherited.join(', ')} inherited)` : ''}`;
}

// 1 when the command ran but found what it checks for (a high-severity lint finding).
let exitCode = 0;

async function main(argv: string[]): Promise<void> {
  // Before anything else: the whole configuration (lib/config); a bad value stops here, named.
  const settings = config();
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    console.log(usage);
    return;
  }
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      email: { type: 'string' },
      role: { type: 'string' },
      password: { type: 'string' },
      principal: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      organization: { type: 'string' },
      server: { type: 'string' },
      tool: { type: 'string' },
      approvals: { type: 'string' },
      show: { type: 'string' },
      'failed-attempts': { type: 'string' },
      calls: { type: 'string' },
      'backoff-base-ms': { type: 'string' },
      batch: { type: 'string' },
      'hold-new-tools': { type: 'string' },
      hash: { type: 'string' },
    },
  });
  const known = [
    'users:create',
    'tokens:create',
    'apikeys:create',
    'servers:trust',
    'servers:set',
    'tools:lint',
    'tools:accept',
    'policy:set',
    'audit:verify',
    'retention:purge',
    'outcomes:reclassify',
  ];
  if (!known.includes(command)) throw new UsageError(`Unknown command "${command}".\n\n${usage}`);

  // Checked before the database is even opened: nothing to undo, and a quick answer.
  const policyInput = command === 'policy:set' ? policyRuleInput(values) : null;
  const hold = values['hold-new-tools'];
  if (command === 'servers:set' && hold !== 'on' && hold !== 'off')
    throw new UsageError('--hold-new-tools: must be on or off');
  const serverName = command === 'servers:set' ? parse(trustServerSchema, { name: values.name }).name : null;
  const lintServer = command === 'tools:lint' ? parse(toolsQuerySchema, { server: values.server ?? '' }).server : null;
  const acceptInput =
    command === 'tools:accept'
      ? parse(
          acceptToolSchema.partial({ definitionHash: true }),
          { server: values.server ?? '', tool: values.tool ?? '', definitionHash: values.hash },
          { definitionHash: 'hash' },
        )
      : null;
  if (command === 'retention:purge') {
    if (!settings.OUTCOME_RETENTION_DAYS.enabled) {
      console.log(`Retention is off (${RETENTION_ENV}=off): outcome records are kept forever; nothing purged.`);
      return;
    }
  }

  const batchSize = values.batch === undefined ? undefined : Number(values.batch);
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 50_000))
    throw new UsageError('--batch: must be a whole number from 1 to 50000');

  const database = await resolveDatabase();
  setEnvironment({ DATABASE_URL: database.url });
  try {
    await applyMigrations(database.url);
    // Imported only now: the data layer reads DATABASE_URL on first use.
    const users = await import('@/lib/server/users/users');
    const credentials = await import('@/lib/server/credentials/credentials');
    switch (command) {
      case 'users:create': {
        // A password account is a break-glass admin: only while local passwords are allowed.
        if (!settings.identity.passwordSignIn)
          throw new UsageError(
            'AUTH_PASSWORD_SIGN_IN is off: local passwords are refused, so users:create would make an account nobody can use. People are created at their first sign-in through the identity provider.',
          );
        const generated = !values.password;
        const password = values.password ?? randomBytes(12).toString('base64url');
        const input = parse(createUserSchema, {
          email: values.email,
          role: values.role,
          password,
          principalId: values.principal,
          name: values.name,
        });
        const result = await users.createUser(cli, input);
        if (!result.ok) failWith(result);
        console.log(
          `Created ${result.value.role} ${result.value.email} (principal ${result.value.principalId}, id ${result.value.userId})`,
        );
        if (generated) console.log(`Password: ${password}`);
        break;
      }
      case 'tokens:create': {
        const email = parse(emailSchema, values.email ?? '');
        const user = await users.findUserByEmail(email);
        if (!user) throw new UsageError(`--email: no user with the email ${email}`);
        if (user.disabledAt) throw new UsageError(`--email: ${email} is disabled`);
        const result = await credentials.createPersonalToken(cli, user.userId, values.name ?? 'cli');
        if (!result.ok) failWith(result);
        console.log(`Personal token for ${email} (shown once, store it now):\n${result.value.secret}`);
        break;
      }
      case 'apikeys:create': {
        const scopes =
          values.scopes
            ?.split(',')
            .map((s) => s.trim())
            .filter(Boolean) ?? [];
        const input = parse(createApiKeySchema, { name: values.name, scopes, organization: values.organization });
        const result = await credentials.createApiKey(cli, input);
        if (!result.ok) failWith(result);
        const { key, secret } = result.value;
        console.log(
          `API key "${key.name}" with scopes ${key.scopes.join(', ')}${key.organization ? ` for organization ${key.organization}` : ''} (shown once, store it now):\n${secret}`,
        );
        break;
      }
      case 'servers:trust': {
        const { name } = parse(trustServerSchema, { name: values.name });
        const { trustServer } = await import('@/lib/server/policy/trusted-servers');
        const result = await trustServer(cli, name);
        if (!result.ok) failWith(result);
        console.log(
          `Trusted server ${result.value.name}: its tool annotations now count (since ${result.value.trustedAt.toISOString()})`,
        );
        break;
      }
      case 'servers:set': {
        const { setHoldNewTools } = await import('@/lib/server/catalog/catalog');
        const result = await setHoldNewTools(cli, serverName!, hold === 'on');
        if (!result.ok) failWith(result);
        console.log(
          result.value.holdNewTools
            ? `Server ${serverName}: new tools are held until an admin accepts them`
            : `Server ${serverName}: new tools are accepted at their first sighting`,
        );
        break;
      }
      case 'tools:lint': {
        const { listTools } = await import('@/lib/server/catalog/catalog');
        const result = await listTools(cli, lintServer!);
        if (!result.ok) failWith(result);
        const { tools, lint } = result.value;
        const held = tools.filter((t) => t.held).length;
        console.log(
          `${lintServer}: ${tools.length} tool${tools.length === 1 ? '' : 's'}${held ? `, ${held} held` : ''}, ${lint.length} finding${lint.length === 1 ? '' : 's'}`,
        );
        for (const f of lint)
          console.log(
            `  ${f.severity.padEnd(6)} ${f.rule}${f.tools.length ? ` (${f.tools.join(', ')})` : ''}: ${f.message}`,
          );
        if (lint.some((f) => f.severity === 'high')) exitCode = 1;
        break;
      }
      case 'tools:accept': {
        const { acceptHeld, listTools } = await import('@/lib/server/catalog/catalog');
        const input = acceptInput!;
        const listed = await listTools(cli, input.server);
        if (!listed.ok) failWith(listed);
        const tool = listed.value.tools.find((t) => t.name === input.tool);
        if (!tool) throw new UsageError(`--tool: ${input.server} has no tool ${input.tool}`);
        if (!tool.held)
          throw new UsageError(`Nothing is held for ${input.tool} on ${input.server}: nothing to accept.`);
        // What is accepted, as the Tools page shows it side by side: each part that differs.
        for (const part of tool.held.differs) {
          const show = (v: unknown) => (v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v));
          console.log(
            `${part}:\n  accepted: ${show(tool.accepted?.definition[part])}\n  held:     ${show(tool.held.definition[part])}`,
          );
        }
        const result = await acceptHeld(cli, {
          server: input.server,
          tool: input.tool,
          definitionHash: input.definitionHash ?? tool.held.definitionHash,
        });
        if (!result.ok) failWith(result);
        console.log(`Accepted ${input.tool} on ${input.server}: ${result.value.definitionHash}`);
        break;
      }
      case 'policy:set': {
        const { setPolicyRule } = await import('@/lib/server/policy/policy-rules');
        const result = await setPolicyRule(cli, policyInput!);
        if (!result.ok)
          throw new UsageError(
            [
              result.detail ?? result.failure,
              ...(result.errors ?? []).map((e) => `--${policyOptions[e.path] ?? e.path}: ${e.message}`),
            ].join('\n'),
          );
        const rule = result.value;
        const n = rule.requiredApprovals;
        const needs = rule.blocked
          ? 'is blocked (not exposed, never called)'
          : `needs ${n === 0 ? 'no approval' : n === 1 ? '1 approval' : `${n} approvals`}`;
        const shows = rule.showFields
          ? `; its queue rows show ${rule.showFields.join(', ')}`
          : values.show !== undefined
            ? '; its queue rows show the first three scalar fields'
            : '';
        // Said when asked about, or when the rule sets any: a rule about approvals alone reads as before.
        const budgetsGiven = Object.values(budgetOptions).some((o) => values[o] !== undefined);
        const budgets =
          budgetsGiven || Object.values(rule.budgets).some((b) => b !== null) ? describeBudgets(rule.budgets) : '';
        console.log(
          `Policy rule: ${rule.tool === null ? `every tool of ${rule.server}` : `${rule.tool} on ${rule.server}`} ${needs} (rule ${rule.id}, set by ${rule.createdBy})${shows}${budgets}`,
        );
        break;
      }
      case 'audit:verify': {
        const { verifyAuditChainAs } = await import('@/lib/server/audit/audit');
        const verified = await verifyAuditChainAs(cli);
        if (!verified.ok) throw new Error(`verify-audit: ${verified.failure}`);
        const result = verified.value;
        if (result.ok) console.log(`Audit chain intact: ${result.entries} entries, head ${result.head}`);
        else
          throw new UsageError(
            `Audit chain BROKEN at entry ${result.firstBrokenEntry}: ${result.reason} (${result.entries} entries verified before it)`,
          );
        break;
      }
      case 'outcomes:reclassify': {
        const { reclassifyOutcomes, describeReclassify } = await import('@/lib/server/outcomes/reclassify');
        const done = await reclassifyOutcomes(cli, { batchSize });
        if (!done.ok) failWith(done);
        console.log(describeReclassify(done.value));
        break;
      }
      case 'retention:purge': {
        const { purgeExpiredOutcomes } = await import('@/lib/server/retention/retention');
        const { cleanUpPurged } = await import('@/lib/server/retention/clean-up');
        const { describePurge, describeCleanUp } = await import('@/lib/server/retention/job');
        const report = await purgeExpiredOutcomes({ actor: auditName(cli) });
        if (report.ran) console.log(describePurge(report));
        else if (report.reason === 'busy')
          console.log("Another purge is running (the console's hourly one, or another cli): skipped.");
        if (report.ran || report.reason === 'busy') {
          const cleaned = await cleanUpPurged();
          if (cleaned.ran) console.log(describeCleanUp(cleaned));
          else console.log('Another clean-up after purges is running: skipped.');
        }
        break;
      }
    }
  } finally {
    const { closeDb } = await import('@/lib/server/db/db');
    await closeDb();
    database.release();
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(exitCode),
  (err) => {
    const failure = configFailure(err);
    if (failure) {
      console.error(`Configuration error: ${failure}`);
      process.exit(1);
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`Error: ${(err as Error).message}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  },
);
