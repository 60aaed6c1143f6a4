// The environment in tests. The product reads its variables through lib/config (parsed once and
// kept), so a test that changes one to set up a case does it here: `setEnv` writes the variables
// and makes the next `config()` read them again; `restoreEnv` puts back what the file changed.
// Below them, what the test harness sets for its own runs (`npm test`, playwright.config.ts) or a
// test reads for its size: not settings (docs/configuration.md), so not in the configuration schema.
import { setEnvironment } from '@/lib/config';

const saved = new Map<string, string | undefined>();

/** Sets (undefined: removes) variables of this process, remembering the first value of each, and re-reads the configuration. */
export function setEnv(values: Record<string, string | undefined>): void {
  for (const name of Object.keys(values)) if (!saved.has(name)) saved.set(name, process.env[name]);
  setEnvironment(values);
}

/** Every variable setEnv changed, as it was before the first change; the configuration re-read. */
export function restoreEnv(): void {
  setEnvironment(Object.fromEntries(saved));
  saved.clear();
}

export const harness = {
  /** The maintenance database of the test server (`npm test` sets it; testing/vitest-setup.ts copies databases through it). */
  adminDatabaseUrl: () => process.env.TEST_ADMIN_DATABASE_URL,
  /** The file the Playwright console's output is copied to (playwright.config.ts, testing/server-log.mjs). */
  e2eServerLog: () => process.env.E2E_SERVER_LOG,
  /** How many records lib/server/outcomes/reclassify.test.ts re-derives (default 30,000). */
  reclassifyRows: () => Number(process.env.RECLASSIFY_ROWS ?? 30_000),
};
