// Database migrations without the native Prisma schema engine (it cannot be downloaded on
// these machines). Same files and history table as `prisma migrate`, so either can be used.
//
//   tsx scripts/migrate.ts deploy               apply pending migrations to DATABASE_URL
//   tsx scripts/migrate.ts create --name <name> write a migration for the changes in prisma/schema/
//   tsx scripts/migrate.ts check                fail when prisma/schema/ and the migrations disagree
//
// `create` and `check` only use DATABASE_URL to reach its server: they work in scratch
// databases there (CREATEDB privilege needed) and drop them afterwards.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyMigrations, defaultMigrationsDir, LOCK_FILE, LOCK_FILE_CONTENT } from './lib/migrations';
import { createScratchDatabase } from './lib/prisma-wasm-adapter';
import { migrationList, noFilter, openEngine, schemaFiles, type Engine } from './lib/prisma-wasm-engine';
import { config } from '@/lib/config';

const USAGE = 'usage: tsx scripts/migrate.ts deploy | create --name <name> | check';

class UsageError extends Error {}

function databaseUrl(): string {
  const url = config().DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (e.g. postgresql://postgres@127.0.0.1:5432/countersign)');
  return url;
}

const relative = (file: string) => path.relative(process.cwd(), file) || '.';

async function deploy(): Promise<void> {
  const applied = await applyMigrations(databaseUrl(), { warn: (message) => console.error(message) });
  if (!applied.length) console.log('No pending migrations.');
  for (const name of applied) console.log(`Applied ${name}`);
}

async function withEngine<T>(connectionString: string, work: (engine: Engine) => Promise<T>): Promise<T> {
  const engine = await openEngine(connectionString);
  try {
    return await work(engine);
  } catch (err) {
    throw engine.explain(err);
  } finally {
    await engine.close();
  }
}

// Folder names end up in every environment's history table: keep them plain.
function migrationName(raw: string | undefined): string {
  const name = (raw ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
  if (!name) throw new UsageError('create needs a name: tsx scripts/migrate.ts create --name <name>');
  return name;
}

// Both create and check work on a scratch database that `deploy` has brought up to date:
// the result depends only on the files, never on the state of anyone's database.
async function withMigratedScratch<T>(purpose: string, work: (url: string) => Promise<T>): Promise<T> {
  const scratch = await createScratchDatabase(databaseUrl(), purpose);
  try {
    await applyMigrations(scratch.url, { warn: () => {} });
    return await work(scratch.url);
  } finally {
    await scratch.drop();
  }
}

async function create(rawName: string | undefined): Promise<void> {
  const name = migrationName(rawName);
  const written = await withMigratedScratch('create', (url) =>
    withEngine(url, async ({ engine }) => {
      const migrationsList = migrationList();
      // createMigration cannot open a shadow database itself: it reuses the schema that
      // devDiagnostic computed from the migrations (on a shadow database), and that covers
      // the whole folder only when the database is up to date, hence the scratch database.
      const { action } = await engine.devDiagnostic({ migrationsList, filters: noFilter });
      if (action.tag === 'reset') throw new Error(`the migrations do not replay consistently: ${action.reason}`);
      const created = await engine.createMigration({
        draft: false,
        migrationName: name,
        migrationsList,
        schema: schemaFiles(),
        filters: noFilter,
      });
      if (created.migrationScript === null) return null;
      const folder = path.join(defaultMigrationsDir, created.generatedMigrationName);
      if (existsSync(folder)) throw new Error(`${relative(folder)} already exists`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, `migration.${created.extension}`), created.migrationScript);
      writeLockFile();
      return folder;
    }),
  );
  console.log(
    written ? `Wrote ${relative(written)}/migration.sql` : 'No changes: prisma/schema/ matches the migrations.',
  );
}

function writeLockFile(): void {
  const file = path.join(defaultMigrationsDir, LOCK_FILE);
  if (!existsSync(file) || readFileSync(file, 'utf8') !== LOCK_FILE_CONTENT) writeFileSync(file, LOCK_FILE_CONTENT);
}

// Has the engine compare the database the migrations build, through the same code path
// as `deploy`, with the schema in prisma/schema/ (all its files); so a migration that no
// longer applies fails it too.
async function check(): Promise<boolean> {
  const difference = await withMigratedScratch('check', (url) =>
    withEngine(url, async ({ engine }) => {
      const compare = (script: boolean) =>
        engine.diff({
          // "The database of this schema" is the adapter's, i.e. the scratch database.
          from: { tag: 'schemaDatasource', ...schemaFiles(), configDir: process.cwd() },
          to: { tag: 'schemaDatamodel', ...schemaFiles() },
          script,
          exitCode: true,
          filters: noFilter,
        });
      const summary = await compare(false);
      if (summary.exitCode === 0) return null;
      return { summary: summary.stdout ?? '', sql: (await compare(true)).stdout ?? '' };
    }),
  );
  if (!difference) {
    console.log('prisma/schema/ and prisma/migrations agree.');
    return true;
  }
  console.error('prisma/schema/ differs from the database the migrations build.');
  console.error('\nWhat prisma/schema/ has that the migrations do not:' + indent(difference.summary));
  console.error('\nThe SQL a new migration would need:' + indent(difference.sql));
  console.error('\nRun `npm run db:create-migration -- <name>` to write it, or fix prisma/schema/.');
  return false;
}

const indent = (text: string) => '\n' + text.trim().replace(/^/gm, '    ');

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'deploy':
      await deploy();
      return 0;
    case 'create': {
      const at = rest.indexOf('--name');
      const name = at >= 0 ? rest[at + 1] : rest.find((arg) => arg.startsWith('--name='))?.slice('--name='.length);
      await create(name);
      return 0;
    }
    case 'check':
      return (await check()) ? 0 : 1;
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n${USAGE}`);
      process.exit(2);
    }
    // Engine messages often start with "error: " already.
    console.error(/^error:/i.test(err.message) ? err.message : `error: ${err.message}`);
    if (config().DEBUG_MIGRATE) console.error(err);
    process.exit(1);
  },
);
