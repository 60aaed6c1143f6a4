// COUNTERSIGN_PROCESSES, in plain JavaScript: the configuration schema (./schema.ts) parses it with
// parseProcesses, and so does scripts/lib/serve.mjs, through processesFromEnvironment: it runs under
// node without a TypeScript loader, so it cannot load the schema, and this is all it reads.
import os from 'node:os';

export const PROCESSES_ENV = 'COUNTERSIGN_PROCESSES';
export const MAX_PROCESSES = 64;

/**
 * COUNTERSIGN_PROCESSES: a whole number from 1 to 64, or `auto` (one per CPU); unset → 1.
 * @param {string | undefined} raw
 * @param {number} [cpus]
 * @returns {number}
 */
export function parseProcesses(raw, cpus = os.availableParallelism()) {
  const value = raw?.trim();
  if (!value) return 1;
  if (value === 'auto') return Math.min(Math.max(cpus, 1), MAX_PROCESSES);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_PROCESSES)
    throw new Error(`${PROCESSES_ENV} must be a whole number from 1 to ${MAX_PROCESSES}, or auto (got "${value}")`);
  return Number(value);
}

/**
 * COUNTERSIGN_PROCESSES of this process's environment, parsed; throws naming it on a bad value.
 * @returns {number}
 */
export function processesFromEnvironment() {
  return parseProcesses(process.env[PROCESSES_ENV]);
}

/**
 * The line `npm start` prints when several processes would each keep their own rate limits.
 * @param {number} processes
 * @param {string | undefined} redisUrl
 * @returns {string | null}
 */
export function sharedLimitsWarning(processes, redisUrl) {
  if (processes < 2 || redisUrl?.trim()) return null;
  return `[serve] ${processes} processes without REDIS_URL: each keeps its own rate limits, so together they allow up to ${processes}× the configured limits; set REDIS_URL to share them`;
}
