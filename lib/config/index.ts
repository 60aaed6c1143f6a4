// The one reader of the environment (docs/configuration.md). Everything else asks `config()` (or,
// in the gateway, `gatewayConfig()`): the environment is parsed by the one schema (./schema.ts) on
// first use and kept. `npm start`, the CLI and the gateway call it before they do anything, so a bad
// value stops them at once, naming the variable; the Next server calls it when it starts
// (instrumentation.ts). The ESLint rule against `process.env` leaves only this folder, the test
// harness (testing/) and the tools' own configuration files reading it.
import { configSchema, gatewaySchema, type Config, type GatewayConfig } from './schema';
import type { z } from 'zod';

export type { Config, GatewayConfig, ConfigVariable } from './schema';

type Environment = Record<string, string | undefined>;

export type ConfigProblem = { variable: string; message: string };

/** A variable with a value its schema refuses; `message` names each one, the value and what it accepts. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map((p) => p.message).join('; '));
  }
}

function problems(error: z.ZodError): ConfigProblem[] {
  return error.issues.map((issue) => {
    const variable = String(issue.path[0] ?? '?');
    // The domain parsers' messages begin with the variable already.
    const message = issue.message.startsWith(`${variable} `) ? issue.message : `${variable}: ${issue.message}`;
    return { variable, message };
  });
}

/** The configuration an environment gives, or a ConfigError (tests; `config()` is this, kept). */
export function parseConfig(env: Environment): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) throw new ConfigError(problems(result.error));
  return result.data;
}

/** The gateway's variables only (it runs on integrators' machines, among environments of their own). */
export function parseGatewayConfig(env: Environment): GatewayConfig {
  const result = gatewaySchema.safeParse(env);
  if (!result.success) throw new ConfigError(problems(result.error));
  return result.data;
}

let parsed: Config | undefined;
let parsedGateway: GatewayConfig | undefined;

/** This process's configuration, parsed on first use; throws a ConfigError on a bad value. */
export function config(): Config {
  return (parsed ??= parseConfig(process.env));
}

/** The gateway's configuration (COUNTERSIGN_URL, COUNTERSIGN_API_KEY), parsed on first use. */
export function gatewayConfig(): GatewayConfig {
  return (parsedGateway ??= parseGatewayConfig(process.env));
}

/**
 * Forgets the parsed configuration, so the next `config()` reads the environment again. For tests
 * that change a variable to set up a case (testing/env.ts `setEnv` does both); a running process
 * never needs it.
 */
export function resetConfigForTests(): void {
  parsed = undefined;
  parsedGateway = undefined;
}

/**
 * Sets (or, with undefined, removes) variables of this process, which its children inherit, and
 * reads the configuration again on next use: what `npm start`, the CLI and `npm test` learn once they
 * have resolved the database (its address, the embedded cluster's secret).
 */
export function setEnvironment(values: Environment): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfigForTests();
}

/**
 * The environment for a child process: this one's, with `extra` on top (undefined removes a
 * variable) and `without` left out (the gateway keeps COUNTERSIGN_API_KEY from the server it
 * starts).
 */
export function childEnvironment(
  extra: Environment = {},
  options: { without?: readonly string[] } = {},
): Record<string, string> & NodeJS.ProcessEnv {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...extra }))
    if (v !== undefined && !options.without?.includes(k)) out[k] = v;
  // As the spawn functions' type has it (Next.js's types declare NODE_ENV on every environment).
  return out as Record<string, string> & NodeJS.ProcessEnv;
}

/**
 * Where Next.js runs this code: NEXT_RUNTIME is written into the server bundle by Next.js at build
 * time ('nodejs' or 'edge'), and NEXT_PHASE is set by `next build`. Neither is configuration, so
 * neither is in the schema; they are read here, literally, so that Next.js can replace the first.
 */
export function nextServer(): { runtime: string | undefined; building: boolean } {
  return {
    runtime: process.env.NEXT_RUNTIME,
    building: process.env.NEXT_PHASE === 'phase-production-build',
  };
}

/**
 * A configuration failure as the one line `npm start`, the CLI and the gateway print after
 * "configuration error:" (no stack trace), or null for any other error.
 */
export function configFailure(err: unknown): string | null {
  if (!(err instanceof ConfigError)) return null;
  const names = [...new Set(err.problems.map((p) => p.variable))];
  const check = names.length === 1 ? 'Check this environment variable' : 'Check these environment variables';
  return `${err.message}. ${check} (docs/configuration.md).`;
}
