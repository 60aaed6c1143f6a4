// Every environment variable Countersign reads, in one zod schema (docs/configuration.md): the
// console, `npm start`, the CLI and the other scripts, the gateway and the demo agent. Each
// variable's entry says what it accepts and its default; unset and empty (or blank) are the same.
// A value the entry refuses is a configuration error naming the variable, the value and what it
// accepts: nothing falls back silently. The domain parsers (retention, partitions, processes, sign-in,
// rate limits) run inside the schema, so a setting is parsed here once and nowhere else.
//
// Not here: what the test harness sets for its own runs (testing/env.ts `harness`), and NEXT_RUNTIME /
// NEXT_PHASE, which Next.js sets for itself (./index.ts `nextServer`).
import { z } from 'zod';
import { identityConfig, type IdentityConfig } from '@/lib/identity/config';
import { rateLimitConfig, RATE_LIMIT_SPECS, type RateLimitConfig } from '@/lib/ratelimit/config';
import { parseRetentionSetting } from '@/lib/outcomes/retention';
import { parsePartitionInterval } from '@/lib/outcomes/partitions';
import { parseProcesses } from './processes.mjs';
import { anyValue, blank, httpUrl, number, onOff, onOrOff, parsedBy, port, text } from './values';

const SIGN_IN_VARIABLES = [
  'AUTH_PASSWORD_SIGN_IN',
  'AUTH_OIDC_ISSUER',
  'AUTH_OIDC_CLIENT_ID',
  'AUTH_OIDC_CLIENT_SECRET',
  'AUTH_OIDC_NAME',
  'AUTH_OIDC_ROLES_CLAIM',
  'AUTH_OIDC_PRINCIPAL_CLAIM',
  'AUTH_OIDC_ROLE_MAP',
] as const;
const RATE_LIMIT_VARIABLES = RATE_LIMIT_SPECS.flatMap((s) => [s.rate, s.burst]);

/** The variables the gateway reads (and the demo agent, with more of its own). */
export const gatewayVariables = {
  /** The console's address. Required by the gateway and the demo agent. */
  COUNTERSIGN_URL: httpUrl('https://countersign.example.com'),
  /** An API key (outcomes:write, approvals:request, grants:redeem). Required by the gateway and the demo agent. */
  COUNTERSIGN_API_KEY: text(),
};

/** Every variable, each with its parser. The keys are the variables' names. */
export const configVariables = {
  // ── Database ──
  /** PostgreSQL connection string; unset: `npm start` and the CLI run the embedded cluster. */
  DATABASE_URL: text({ exact: true }),
  DATABASE_POOL_SIZE: number({ unit: 'connections', whole: true, min: 1, default: 10 }),
  DATABASE_QUERY_TIMEOUT_MS: number({ unit: 'milliseconds', whole: true, min: 1, default: 15_000 }),
  /** A streaming replica for reads (lib/server/db/replica.ts); unset: none. */
  DATABASE_REPLICA_URL: text({ exact: true }),
  /** Unset: DATABASE_POOL_SIZE's value. */
  DATABASE_REPLICA_POOL_SIZE: number({
    unit: 'connections',
    whole: true,
    min: 1,
    default: undefined,
    defaultText: "DATABASE_POOL_SIZE's value",
  }),
  DATABASE_REPLICA_MAX_LAG_MS: number({ unit: 'milliseconds', whole: false, min: 0, default: 2_000 }),
  DATABASE_REPLICA_CHECK_MS: number({ unit: 'milliseconds', whole: false, min: 0, default: 1_000 }),

  // ── Secrets and sign-in ──
  /** Every key the console derives comes from it (lib/server/secrets.ts); required with DATABASE_URL. */
  AUTH_SECRET: text({ exact: true }),
  /** Auth.js's own address setting; unset: from COUNTERSIGN_PUBLIC_URL, else the address the browser used. */
  AUTH_URL: httpUrl('https://countersign.example.com/api/auth'),
  AUTH_PASSWORD_SIGN_IN: text(),
  AUTH_OIDC_ISSUER: text(),
  AUTH_OIDC_CLIENT_ID: text(),
  AUTH_OIDC_CLIENT_SECRET: text(),
  AUTH_OIDC_NAME: text(),
  AUTH_OIDC_ROLES_CLAIM: text(),
  AUTH_OIDC_PRINCIPAL_CLAIM: text(),
  AUTH_OIDC_ROLE_MAP: text(),

  // ── The server ──
  /** Where people reach the console (links in notifications, the sign-in redirect). */
  COUNTERSIGN_PUBLIC_URL: httpUrl('https://countersign.example.com'),
  /** The console's port (3000 when unset); the demo MCP server's too (4410 when unset). */
  PORT: port('3000 for the console, 4410 for the demo MCP server'),
  COUNTERSIGN_PROCESSES: parsedBy((raw) => parseProcesses(raw)),
  /** The embedded cluster's folder, and `npm start`'s build log. */
  COUNTERSIGN_DATA_DIR: z
    .string()
    .optional()
    .transform((raw) => (blank(raw) ? '.data' : raw)),
  COUNTERSIGN_PG_PORT: number({
    what: 'a port number',
    whole: true,
    min: 0,
    max: 65535,
    default: 0,
    defaultText: '0: a free port',
  }),
  COUNTERSIGN_SEED_DEMO: onOff('seed the demo data into DATABASE_URL'),

  // ── Rate limits (lib/ratelimit/config.ts) ──
  RATE_LIMIT_API_KEY_PER_SECOND: text(),
  RATE_LIMIT_API_KEY_BURST: text(),
  RATE_LIMIT_USER_PER_SECOND: text(),
  RATE_LIMIT_USER_BURST: text(),
  RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: text(),
  RATE_LIMIT_SIGN_IN_EMAIL_BURST: text(),
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR: text(),
  RATE_LIMIT_SIGN_IN_ADDRESS_BURST: text(),
  /** Rate limits shared through Redis; unset: each process keeps its own. */
  REDIS_URL: text(),
  REDIS_KEY_PREFIX: z
    .string()
    .optional()
    .transform((raw) => (blank(raw) ? 'countersign:' : raw.trim())),

  // ── Outcome records ──
  OUTCOME_RETENTION_DAYS: parsedBy(parseRetentionSetting),
  OUTCOME_PARTITION_INTERVAL: parsedBy(parsePartitionInterval),

  // ── Approvals ──
  /** Off: approval requests without the tool's arguments are taken (docs/design.md "What a reviewer sees"). */
  COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: onOrOff(true),

  // ── Notifications: a bad value here turns that endpoint off, logged, rather than stopping the
  // server (lib/server/webhooks/env.ts), so these are taken as text. ──
  COUNTERSIGN_WEBHOOK_URL: text(),
  COUNTERSIGN_WEBHOOK_FORMAT: text(),
  COUNTERSIGN_WEBHOOK_SECRET: text(),

  // ── The gateway and the demo agent ──
  ...gatewayVariables,
  COUNTERSIGN_APPROVAL_WAIT_SECONDS: number({ unit: 'seconds', whole: false, min: 0, default: 600 }),
  /** A reviewer's personal token: the demo agent decides its own requests. */
  COUNTERSIGN_REVIEWER_TOKEN: text(),
  /** The principal the demo agent acts for (default user_193). */
  COUNTERSIGN_PRINCIPAL: text(),
  COUNTERSIGN_ORGANIZATION: text(),

  // ── Development: `npm test`, the browser tests, migrations ──
  /** The PostgreSQL server `npm test` creates its database on; unset: DATABASE_URL's, else an embedded one. */
  TEST_DATABASE_URL: text({ exact: true }),
  /** The Chromium the browser tests drive; unset: /usr/bin/chromium (installed when missing, as root on Debian). */
  CHROMIUM_PATH: text({ exact: true }),
  /** The port of the console the browser tests start (playwright.config.ts reads it too). */
  E2E_PORT: number({ what: 'a port number', whole: true, min: 1, max: 65535, default: 3100 }),
  /** Set: e2e/layout/screenshots.spec.ts takes its screenshots. */
  SCREENSHOTS: anyValue(),
  DEBUG_MIGRATE: anyValue(),
  DEBUG_SCHEMA_ENGINE: anyValue(),
};

export type ConfigVariable = keyof typeof configVariables;

function pick<K extends string>(values: Record<string, unknown>, keys: readonly K[]): Record<K, string | undefined> {
  return Object.fromEntries(keys.map((k) => [k, values[k]])) as Record<K, string | undefined>;
}

/** A domain parser's error as an issue on the variable its message begins with. */
function issueFrom(err: unknown, ctx: z.RefinementCtx, candidates: readonly string[]) {
  const message = (err as Error).message;
  const variable = candidates.find((v) => message.startsWith(`${v} `)) ?? candidates[0];
  ctx.addIssue({ code: 'custom', message, path: [variable] });
}

export const configSchema = z.object(configVariables).transform((v, ctx) => {
  let identity: IdentityConfig | undefined;
  let rateLimits: RateLimitConfig | undefined;
  try {
    identity = identityConfig(pick(v, SIGN_IN_VARIABLES));
  } catch (err) {
    issueFrom(err, ctx, SIGN_IN_VARIABLES);
  }
  try {
    rateLimits = rateLimitConfig(pick(v, RATE_LIMIT_VARIABLES));
  } catch (err) {
    issueFrom(err, ctx, RATE_LIMIT_VARIABLES);
  }
  if (!identity || !rateLimits) return z.NEVER;
  return {
    ...v,
    DATABASE_REPLICA_POOL_SIZE: v.DATABASE_REPLICA_POOL_SIZE ?? v.DATABASE_POOL_SIZE,
    /** AUTH_PASSWORD_SIGN_IN and AUTH_OIDC_*, read together (lib/identity/config.ts). */
    identity,
    /** RATE_LIMIT_*, read together (lib/ratelimit/config.ts). */
    rateLimits,
  };
});

export const gatewaySchema = z.object(gatewayVariables);

export type Config = z.output<typeof configSchema>;
export type GatewayConfig = z.output<typeof gatewaySchema>;
