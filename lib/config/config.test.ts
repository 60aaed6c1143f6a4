import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, configFailure, parseConfig } from '.';
import { configVariables } from './schema';
import { restoreEnv } from '@/testing/env';

afterEach(restoreEnv);
import { ANY_TEXT, DEFAULTS, OIDC, WRONG } from '@/testing/config-cases';

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
    [{ COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: ' OFF ' }, { COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: false }],
    [{ COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: 'on' }, { COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: true }],
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
