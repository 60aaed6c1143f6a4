import { afterEach, describe, expect, it } from 'vitest';
import {
  childEnvironment,
  config,
  ConfigError,
  configFailure,
  parseConfig,
  parseGatewayConfig,
  setEnvironment,
} from '.';
import { configVariables } from './schema';
import { restoreEnv, setEnv } from '@/testing/env';

afterEach(restoreEnv);

// Every variable unset: the defaults, as docs/configuration.md gives them.
const DEFAULTS = {
  DATABASE_URL: undefined,
  DATABASE_POOL_SIZE: 10,
  DATABASE_QUERY_TIMEOUT_MS: 15_000,
  DATABASE_REPLICA_URL: undefined,
  DATABASE_REPLICA_POOL_SIZE: 10,
  DATABASE_REPLICA_MAX_LAG_MS: 2_000,
  DATABASE_REPLICA_CHECK_MS: 1_000,
  AUTH_SECRET: undefined,
  AUTH_URL: undefined,
  AUTH_PASSWORD_SIGN_IN: undefined,
  AUTH_OIDC_ISSUER: undefined,
  AUTH_OIDC_CLIENT_ID: undefined,
  AUTH_OIDC_CLIENT_SECRET: undefined,
  AUTH_OIDC_NAME: undefined,
  AUTH_OIDC_ROLES_CLAIM: undefined,
  AUTH_OIDC_PRINCIPAL_CLAIM: undefined,
  AUTH_OIDC_ROLE_MAP: undefined,
  COUNTERSIGN_PUBLIC_URL: undefined,
  PORT: undefined,
  COUNTERSIGN_PROCESSES: 1,
  COUNTERSIGN_DATA_DIR: '.data',
  COUNTERSIGN_PG_PORT: 0,
  COUNTERSIGN_SEED_DEMO: false,
  RATE_LIMIT_API_KEY_PER_SECOND: undefined,
  RATE_LIMIT_API_KEY_BURST: undefined,
  RATE_LIMIT_USER_PER_SECOND: undefined,
  RATE_LIMIT_USER_BURST: undefined,
  RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: undefined,
  RATE_LIMIT_SIGN_IN_EMAIL_BURST: undefined,
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR: undefined,
  RATE_LIMIT_SIGN_IN_ADDRESS_BURST: undefined,
  REDIS_URL: undefined,
  REDIS_KEY_PREFIX: 'countersign:',
  OUTCOME_RETENTION_DAYS: { enabled: true, days: 90 },
  OUTCOME_PARTITION_INTERVAL: 'month',
  COUNTERSIGN_WEBHOOK_URL: undefined,
  COUNTERSIGN_WEBHOOK_FORMAT: undefined,
  COUNTERSIGN_WEBHOOK_SECRET: undefined,
  COUNTERSIGN_URL: undefined,
  COUNTERSIGN_API_KEY: undefined,
  COUNTERSIGN_APPROVAL_WAIT_SECONDS: 600,
  COUNTERSIGN_REVIEWER_TOKEN: undefined,
  COUNTERSIGN_PRINCIPAL: undefined,
  COUNTERSIGN_ORGANIZATION: undefined,
  TEST_DATABASE_URL: undefined,
  CHROMIUM_PATH: undefined,
  E2E_PORT: 3100,
  SCREENSHOTS: false,
  DEBUG_MIGRATE: false,
  DEBUG_SCHEMA_ENGINE: false,
  identity: { oidc: null, passwordSignIn: true },
  rateLimits: {
    apiKey: { perSecond: 5_000, burst: 10_000 },
    user: { perSecond: 20, burst: 100 },
    signInEmail: { perSecond: 20 / 3600, burst: 10 },
    signInAddress: { perSecond: 200 / 3600, burst: 50 },
  },
};

const OIDC = {
  AUTH_OIDC_ISSUER: 'https://idp.example.com',
  AUTH_OIDC_CLIENT_ID: 'client',
  AUTH_OIDC_CLIENT_SECRET: 'secret',
  AUTH_OIDC_ROLE_MAP: 'admins=admin',
};

// [the variable, the environment (the variable wrong, and what else the case needs), the one message]
const WRONG: [string, Record<string, string>, string][] = [
  [
    'DATABASE_POOL_SIZE',
    { DATABASE_POOL_SIZE: 'none' },
    'DATABASE_POOL_SIZE: "none" is not a number; expected a whole number of connections ≥ 1 (default 10)',
  ],
  [
    'DATABASE_QUERY_TIMEOUT_MS',
    { DATABASE_QUERY_TIMEOUT_MS: 'ten' },
    'DATABASE_QUERY_TIMEOUT_MS: "ten" is not a number; expected a whole number of milliseconds ≥ 1 (default 15000)',
  ],
  [
    'DATABASE_REPLICA_POOL_SIZE',
    { DATABASE_REPLICA_POOL_SIZE: '0' },
    `DATABASE_REPLICA_POOL_SIZE: "0" is below 1; expected a whole number of connections ≥ 1 (default DATABASE_POOL_SIZE's value)`,
  ],
  [
    'DATABASE_REPLICA_MAX_LAG_MS',
    { DATABASE_REPLICA_MAX_LAG_MS: '-1' },
    'DATABASE_REPLICA_MAX_LAG_MS: "-1" is below 0; expected a number of milliseconds ≥ 0 (default 2000)',
  ],
  [
    'DATABASE_REPLICA_CHECK_MS',
    { DATABASE_REPLICA_CHECK_MS: 'often' },
    'DATABASE_REPLICA_CHECK_MS: "often" is not a number; expected a number of milliseconds ≥ 0 (default 1000)',
  ],
  [
    'AUTH_URL',
    { AUTH_URL: 'countersign.example.com/api/auth' },
    'AUTH_URL: "countersign.example.com/api/auth" is not an http(s) URL; expected e.g. https://countersign.example.com/api/auth',
  ],
  ['AUTH_PASSWORD_SIGN_IN', { AUTH_PASSWORD_SIGN_IN: 'no' }, 'AUTH_PASSWORD_SIGN_IN must be "on" or "off" (got "no")'],
  [
    'AUTH_OIDC_ISSUER',
    { ...OIDC, AUTH_OIDC_ISSUER: 'http://idp.example.com' },
    'AUTH_OIDC_ISSUER must be an https URL (http only on loopback)',
  ],
  [
    'AUTH_OIDC_CLIENT_ID',
    { ...OIDC, AUTH_OIDC_CLIENT_ID: '' },
    'AUTH_OIDC_CLIENT_ID is required when AUTH_OIDC_ISSUER is set',
  ],
  [
    'AUTH_OIDC_CLIENT_SECRET',
    { ...OIDC, AUTH_OIDC_CLIENT_SECRET: ' ' },
    'AUTH_OIDC_CLIENT_SECRET is required when AUTH_OIDC_ISSUER is set',
  ],
  ['AUTH_OIDC_NAME', { ...OIDC, AUTH_OIDC_NAME: 'n'.repeat(61) }, 'AUTH_OIDC_NAME must be at most 60 characters'],
  [
    'AUTH_OIDC_ROLES_CLAIM',
    { ...OIDC, AUTH_OIDC_ROLES_CLAIM: 'two words' },
    'AUTH_OIDC_ROLES_CLAIM must be a claim name (letters, digits, _ . : -), got "two words"',
  ],
  [
    'AUTH_OIDC_PRINCIPAL_CLAIM',
    { ...OIDC, AUTH_OIDC_PRINCIPAL_CLAIM: '1st' },
    'AUTH_OIDC_PRINCIPAL_CLAIM must be a claim name (letters, digits, _ . : -), got "1st"',
  ],
  [
    'AUTH_OIDC_ROLE_MAP',
    { ...OIDC, AUTH_OIDC_ROLE_MAP: 'ops=root' },
    'AUTH_OIDC_ROLE_MAP gives "ops" the unknown role "root" (admin, reviewer or support)',
  ],
  [
    'COUNTERSIGN_PUBLIC_URL',
    { COUNTERSIGN_PUBLIC_URL: 'countersign.example.com' },
    'COUNTERSIGN_PUBLIC_URL: "countersign.example.com" is not an http(s) URL; expected e.g. https://countersign.example.com',
  ],
  [
    'PORT',
    { PORT: 'http' },
    'PORT: "http" is not a number; expected a port number from 0 to 65535 (default 3000 for the console, 4410 for the demo MCP server)',
  ],
  [
    'COUNTERSIGN_PROCESSES',
    { COUNTERSIGN_PROCESSES: 'many' },
    'COUNTERSIGN_PROCESSES must be a whole number from 1 to 64, or auto (got "many")',
  ],
  [
    'COUNTERSIGN_PG_PORT',
    { COUNTERSIGN_PG_PORT: '70000' },
    'COUNTERSIGN_PG_PORT: "70000" is above 65535; expected a port number from 0 to 65535 (default 0: a free port)',
  ],
  [
    'COUNTERSIGN_SEED_DEMO',
    { COUNTERSIGN_SEED_DEMO: 'yes' },
    'COUNTERSIGN_SEED_DEMO: "yes" is not 1 or 0; expected 1 (seed the demo data into DATABASE_URL) or 0 (default 0)',
  ],
  [
    'RATE_LIMIT_API_KEY_PER_SECOND',
    { RATE_LIMIT_API_KEY_PER_SECOND: 'fast' },
    'RATE_LIMIT_API_KEY_PER_SECOND must be a positive number (got "fast")',
  ],
  [
    'RATE_LIMIT_API_KEY_BURST',
    { RATE_LIMIT_API_KEY_BURST: '1.5' },
    'RATE_LIMIT_API_KEY_BURST must be a whole number of at least 1 (got "1.5")',
  ],
  [
    'RATE_LIMIT_USER_PER_SECOND',
    { RATE_LIMIT_USER_PER_SECOND: '0' },
    'RATE_LIMIT_USER_PER_SECOND must be a positive number (got "0")',
  ],
  [
    'RATE_LIMIT_USER_BURST',
    { RATE_LIMIT_USER_BURST: 'lots' },
    'RATE_LIMIT_USER_BURST must be a whole number of at least 1 (got "lots")',
  ],
  [
    'RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR',
    { RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: '-3' },
    'RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR must be a positive number (got "-3")',
  ],
  [
    'RATE_LIMIT_SIGN_IN_EMAIL_BURST',
    { RATE_LIMIT_SIGN_IN_EMAIL_BURST: '0' },
    'RATE_LIMIT_SIGN_IN_EMAIL_BURST must be a whole number of at least 1 (got "0")',
  ],
  [
    'RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR',
    { RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR: 'hourly' },
    'RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR must be a positive number (got "hourly")',
  ],
  [
    'RATE_LIMIT_SIGN_IN_ADDRESS_BURST',
    { RATE_LIMIT_SIGN_IN_ADDRESS_BURST: '5x' },
    'RATE_LIMIT_SIGN_IN_ADDRESS_BURST must be a whole number of at least 1 (got "5x")',
  ],
  [
    'OUTCOME_RETENTION_DAYS',
    { OUTCOME_RETENTION_DAYS: '0' },
    'OUTCOME_RETENTION_DAYS must be a whole number of days from 1 to 36500, or "off" to keep outcome records forever (it is "0"; unset means 90)',
  ],
  [
    'OUTCOME_PARTITION_INTERVAL',
    { OUTCOME_PARTITION_INTERVAL: 'hourly' },
    'OUTCOME_PARTITION_INTERVAL must be one of day, week, month, quarter, year (it is "hourly"; unset means month)',
  ],
  [
    'COUNTERSIGN_URL',
    { COUNTERSIGN_URL: 'ftp://countersign.example.com' },
    'COUNTERSIGN_URL: "ftp://countersign.example.com" is not an http(s) URL; expected e.g. https://countersign.example.com',
  ],
  [
    'COUNTERSIGN_APPROVAL_WAIT_SECONDS',
    { COUNTERSIGN_APPROVAL_WAIT_SECONDS: 'soon' },
    'COUNTERSIGN_APPROVAL_WAIT_SECONDS: "soon" is not a number; expected a number of seconds ≥ 0 (default 600)',
  ],
  ['E2E_PORT', { E2E_PORT: '0' }, 'E2E_PORT: "0" is below 1; expected a port number from 1 to 65535 (default 3100)'],
];

// Any text is taken: connection strings, secrets, names, paths, switches set to anything; and the
// webhook variables, whose bad values turn that endpoint off, logged, instead (lib/server/webhooks/env.ts).
const ANY_TEXT = [
  'DATABASE_URL',
  'DATABASE_REPLICA_URL',
  'AUTH_SECRET',
  'COUNTERSIGN_DATA_DIR',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'COUNTERSIGN_WEBHOOK_URL',
  'COUNTERSIGN_WEBHOOK_FORMAT',
  'COUNTERSIGN_WEBHOOK_SECRET',
  'COUNTERSIGN_API_KEY',
  'COUNTERSIGN_REVIEWER_TOKEN',
  'COUNTERSIGN_PRINCIPAL',
  'COUNTERSIGN_ORGANIZATION',
  'TEST_DATABASE_URL',
  'CHROMIUM_PATH',
  'SCREENSHOTS',
  'DEBUG_MIGRATE',
  'DEBUG_SCHEMA_ENGINE',
];

function problemsOf(env: Record<string, string>) {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
  }
  throw new Error(`${JSON.stringify(env)} was not refused`);
}

describe('the configuration schema', () => {
  it('has a wrong-value case, or takes any text, for every variable it reads', () => {
    const covered = [...WRONG.map(([name]) => name), ...ANY_TEXT].sort();
    expect(covered).toEqual(Object.keys(configVariables).sort());
  });

  it.each(WRONG)('%s: a wrong value is refused in one message naming it', (name, env, message) => {
    const err = problemsOf(env);
    expect(err.problems).toEqual([{ variable: name, message }]);
    expect(err.message).toBe(message);
  });

  it.each(ANY_TEXT)('%s: takes any text', (name) => {
    expect(() => parseConfig({ [name]: 'any text at all ✓' })).not.toThrow();
  });

  it('refuses DATABASE_QUERY_TIMEOUT_MS=ten, which used to read as 15000', () => {
    expect(() => parseConfig({ DATABASE_QUERY_TIMEOUT_MS: 'ten' })).toThrow(ConfigError);
    expect(() => parseConfig({ DATABASE_QUERY_TIMEOUT_MS: 'ten' })).toThrow(/^DATABASE_QUERY_TIMEOUT_MS: "ten"/);
  });

  it.each([
    ['DATABASE_QUERY_TIMEOUT_MS', '0', '"0" is below 1'],
    ['DATABASE_QUERY_TIMEOUT_MS', '1.5', '"1.5" is not a whole number'],
    ['DATABASE_QUERY_TIMEOUT_MS', '-200', '"-200" is below 1'],
    ['DATABASE_POOL_SIZE', '0', '"0" is below 1'],
    ['DATABASE_REPLICA_CHECK_MS', 'Infinity', '"Infinity" is not a number'],
    ['PORT', '65536', '"65536" is above 65535'],
  ])('%s=%s, which used to fall back to the default, is refused: %s', (name, raw, wrong) => {
    expect(problemsOf({ [name]: raw }).message).toContain(`${name}: ${wrong}; expected`);
  });

  it('gives the defaults when nothing is set, and when everything is empty or blank', () => {
    expect(parseConfig({})).toEqual(DEFAULTS);
    expect(parseConfig(Object.fromEntries(Object.keys(configVariables).map((k) => [k, ''])))).toEqual(DEFAULTS);
    expect(parseConfig(Object.fromEntries(Object.keys(configVariables).map((k) => [k, '  '])))).toEqual(DEFAULTS);
  });

  it.each([
    [{ DATABASE_QUERY_TIMEOUT_MS: ' 2000 ' }, { DATABASE_QUERY_TIMEOUT_MS: 2000 }],
    [{ DATABASE_QUERY_TIMEOUT_MS: '1e3' }, { DATABASE_QUERY_TIMEOUT_MS: 1000 }], // Number()'s reading, as before
    [{ DATABASE_POOL_SIZE: '4' }, { DATABASE_POOL_SIZE: 4, DATABASE_REPLICA_POOL_SIZE: 4 }],
    [
      { DATABASE_POOL_SIZE: '4', DATABASE_REPLICA_POOL_SIZE: '2' },
      { DATABASE_POOL_SIZE: 4, DATABASE_REPLICA_POOL_SIZE: 2 },
    ],
    [{ DATABASE_REPLICA_CHECK_MS: '0' }, { DATABASE_REPLICA_CHECK_MS: 0 }],
    [{ DATABASE_REPLICA_MAX_LAG_MS: '0.5' }, { DATABASE_REPLICA_MAX_LAG_MS: 0.5 }],
    [{ AUTH_SECRET: ' kept exactly ' }, { AUTH_SECRET: ' kept exactly ' }],
    [{ DATABASE_URL: 'postgresql://u@h/db' }, { DATABASE_URL: 'postgresql://u@h/db' }],
    [{ PORT: ' 8080 ' }, { PORT: '8080' }],
    [{ COUNTERSIGN_PUBLIC_URL: ' https://cs.example.com/ ' }, { COUNTERSIGN_PUBLIC_URL: 'https://cs.example.com/' }],
    [{ COUNTERSIGN_PROCESSES: '4' }, { COUNTERSIGN_PROCESSES: 4 }],
    [{ COUNTERSIGN_SEED_DEMO: '1' }, { COUNTERSIGN_SEED_DEMO: true }],
    [{ COUNTERSIGN_SEED_DEMO: '0' }, { COUNTERSIGN_SEED_DEMO: false }],
    [{ COUNTERSIGN_PG_PORT: '5433' }, { COUNTERSIGN_PG_PORT: 5433 }],
    [{ REDIS_KEY_PREFIX: ' cs-a: ' }, { REDIS_KEY_PREFIX: 'cs-a:' }],
    [{ OUTCOME_RETENTION_DAYS: 'OFF' }, { OUTCOME_RETENTION_DAYS: { enabled: false } }],
    [{ OUTCOME_RETENTION_DAYS: '7' }, { OUTCOME_RETENTION_DAYS: { enabled: true, days: 7 } }],
    [{ OUTCOME_PARTITION_INTERVAL: 'Week' }, { OUTCOME_PARTITION_INTERVAL: 'week' }],
    [{ COUNTERSIGN_APPROVAL_WAIT_SECONDS: '20' }, { COUNTERSIGN_APPROVAL_WAIT_SECONDS: 20 }],
    [{ DEBUG_MIGRATE: '0' }, { DEBUG_MIGRATE: true }], // set to anything: on, as before
    [{ SCREENSHOTS: '1' }, { SCREENSHOTS: true }],
    [{ E2E_PORT: '3200' }, { E2E_PORT: 3200 }],
    [
      { RATE_LIMIT_USER_PER_SECOND: '0.25', RATE_LIMIT_USER_BURST: '2' },
      { RATE_LIMIT_USER_PER_SECOND: '0.25', RATE_LIMIT_USER_BURST: '2' },
    ],
  ])('takes %j as %j', (env, expected) => {
    expect(parseConfig(env)).toMatchObject(expected);
  });

  it('reads the sign-in and rate-limit variables together', () => {
    const c = parseConfig({ ...OIDC, AUTH_PASSWORD_SIGN_IN: 'off', RATE_LIMIT_USER_PER_SECOND: '0.25' });
    expect(c.identity.passwordSignIn).toBe(false);
    expect(c.identity.oidc).toMatchObject({
      issuer: 'https://idp.example.com',
      clientId: 'client',
      name: 'Single sign-on',
      rolesClaim: 'groups',
      principalClaim: 'email',
    });
    expect(c.rateLimits.user).toEqual({ perSecond: 0.25, burst: 100 });
  });

  it('names every wrong variable at once, in one message', () => {
    const err = problemsOf({ DATABASE_QUERY_TIMEOUT_MS: 'ten', PORT: 'http' });
    expect(err.problems.map((p) => p.variable)).toEqual(['DATABASE_QUERY_TIMEOUT_MS', 'PORT']);
    expect(configFailure(err)).toBe(
      'DATABASE_QUERY_TIMEOUT_MS: "ten" is not a number; expected a whole number of milliseconds ≥ 1 (default 15000); ' +
        'PORT: "http" is not a number; expected a port number from 0 to 65535 (default 3000 for the console, 4410 for the demo MCP server). ' +
        'Check these environment variables (docs/configuration.md).',
    );
    expect(configFailure(new Error('other'))).toBeNull();
  });
});

describe('the gateway', () => {
  it("reads only its own variables: the console's are none of its business", () => {
    expect(
      parseGatewayConfig({
        DATABASE_QUERY_TIMEOUT_MS: 'ten',
        COUNTERSIGN_URL: 'https://cs.example.com',
        COUNTERSIGN_API_KEY: ' k ',
      }),
    ).toEqual({ COUNTERSIGN_URL: 'https://cs.example.com', COUNTERSIGN_API_KEY: 'k' });
    expect(() => parseGatewayConfig({ COUNTERSIGN_URL: 'not a url' })).toThrow(
      'COUNTERSIGN_URL: "not a url" is not an http(s) URL; expected e.g. https://countersign.example.com',
    );
  });
});

describe('config()', () => {
  it('is parsed once and kept; setEnv (tests) and setEnvironment read it again', () => {
    setEnv({ DATABASE_POOL_SIZE: '3' });
    const first = config();
    expect(first.DATABASE_POOL_SIZE).toBe(3);
    process.env.DATABASE_POOL_SIZE = '5'; // behind its back: not seen
    expect(config()).toBe(first);
    setEnvironment({ DATABASE_POOL_SIZE: '6' });
    expect(config().DATABASE_POOL_SIZE).toBe(6);
    setEnv({ DATABASE_POOL_SIZE: 'ten' });
    expect(() => config()).toThrow('DATABASE_POOL_SIZE: "ten" is not a number');
  });
});

describe('childEnvironment', () => {
  it("is this process's environment with the extra variables on top, undefined ones and `without` left out", () => {
    setEnv({ CS_CHILD_A: 'a', CS_CHILD_B: 'b', CS_CHILD_C: 'c' });
    const env = childEnvironment(
      { CS_CHILD_B: 'B', CS_CHILD_C: undefined, CS_CHILD_D: 'd' },
      { without: ['CS_CHILD_A'] },
    );
    expect(env).toMatchObject({ CS_CHILD_B: 'B', CS_CHILD_D: 'd' });
    expect(env).not.toHaveProperty('CS_CHILD_A');
    expect(env).not.toHaveProperty('CS_CHILD_C');
    expect(env.PATH).toBe(process.env.PATH);
    expect(Object.values(env).every((v) => typeof v === 'string')).toBe(true);
  });
});
