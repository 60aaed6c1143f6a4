// Each integration test file gets its own database, copied from the migrated one that
// scripts/test.ts prepared: files run in parallel without seeing each other's rows.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import pg from 'pg';
import { resetConfigForTests } from '@/lib/config';

// Suites act as the same person many times (e.g. app/api/v1/hostile-*.test.ts with personal
// tokens): the per-person limit (20/s, burst 100) would make them depend on their speed. Unless
// set otherwise; lib/server/rate-limit/rate-limit.test.ts sets its own low limits to test real ones.
process.env.RATE_LIMIT_USER_PER_SECOND ??= '10000';
process.env.RATE_LIMIT_USER_BURST ??= '100000';

const template = process.env.DATABASE_URL;
const admin = process.env.TEST_ADMIN_DATABASE_URL;

if (template && admin) {
  const templateName = decodeURIComponent(new URL(template).pathname.slice(1));
  const name = `${templateName}_f${randomBytes(4).toString('hex')}`.slice(0, 63);
  const own = new URL(template);
  own.pathname = `/${name}`;
  process.env.DATABASE_URL = own.toString();
  resetConfigForTests(); // lib/config reads the environment once: this file's database from here on

  const adminQuery = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    // Copying a template fails while another session copies it; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${templateName}"`);
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  });

  afterAll(async () => {
    const { closeDb } = await import('@/lib/server/db/db');
    await closeDb();
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}
