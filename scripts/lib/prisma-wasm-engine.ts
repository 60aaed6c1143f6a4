// Loads Prisma's WebAssembly schema engine and connects it to PostgreSQL through the
// adapter in prisma-wasm-adapter.ts. The native engine cannot be downloaded here; this
// one ships inside npm (@prisma/schema-engine-wasm, the build matching prisma 7.10.0).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine, SchemaFilter, SchemasContainer } from '@prisma/schema-engine-wasm';
import { engineAdapterFactory } from './prisma-wasm-adapter';
import { config } from '@/lib/config';
import { assertLockFileProvider, defaultMigrationsDir, LOCK_FILE, readLocalMigrations } from './migrations';

// The schema: a folder of .prisma files by concept, the one prisma.config.ts names for `prisma generate`.
export const defaultSchemaDir = path.resolve(defaultMigrationsDir, '..', 'schema');

export const noFilter: SchemaFilter = { externalTables: [], externalEnums: [] };

// The package's entry imports the .wasm file as an ES module, which Node 20 only does
// behind a flag; so instantiate the binary ourselves and hand it to the generated glue.
// Once per process: the glue holds a single instance, and engines share it.
let engineModule: ReturnType<typeof instantiateEngineModule> | undefined;
const loadEngineModule = () => (engineModule ??= instantiateEngineModule());

async function instantiateEngineModule() {
  const require = createRequire(import.meta.url);
  const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const glue = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const bytes = readFileSync(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue;
}

// An engine panic reaches JS as a bare "unreachable" RuntimeError; the glue code reports
// the Rust message to this global first, and fails outright when it is missing.
const panics = { last: '' };
(globalThis as { PRISMA_WASM_PANIC_REGISTRY?: unknown }).PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message: string) {
    panics.last = message;
  },
};

export type Engine = {
  engine: SchemaEngine;
  /** The error to show for a failed engine call. */
  explain(err: unknown): Error;
  /** Frees the engine, closes its connections, drops shadow databases left. Always call it. */
  close(): Promise<void>;
};

/** A schema engine whose main database is `connectionString`; shadow databases go next to it. */
export async function openEngine(connectionString: string): Promise<Engine> {
  const { SchemaEngine } = await loadEngineModule();
  const factory = engineAdapterFactory(connectionString);
  const log = config().DEBUG_SCHEMA_ENGINE ? (line: string) => console.error('[schema-engine]', line) : () => {};
  const bound = bindMigrationAwareSqlAdapterFactory(factory);
  const engine = await SchemaEngine.new({ datamodels: undefined }, log, bound);
  return {
    engine,
    explain: (err) => explainEngineError(err, bound.errorRegistry),
    async close() {
      try {
        engine.free();
      } catch {
        // After a panic the engine refuses every call, free() included; the error that
        // matters is the panic, already reported by explain().
      }
      await factory.cleanup();
    },
  };
}

// Engine failures come back in forms that hide their cause: a panic as "unreachable", and
// an exception thrown by our adapter code as "External error id#N", N indexing the
// adapter binding's error registry.
function explainEngineError(
  err: unknown,
  registry: { consumeError(id: number): { error: unknown } | undefined },
): Error {
  if (err instanceof Error && err.name === 'RuntimeError' && panics.last) {
    const message = panics.last;
    panics.last = '';
    return new Error(`schema engine panicked: ${message}`, { cause: err });
  }
  const external = err instanceof Error ? /External error id#(\d+)/.exec(err.message) : null;
  const cause = external ? registry.consumeError(Number(external[1]))?.error : undefined;
  if (cause instanceof Error) return cause;
  if (err instanceof Error) return err;
  // The engine rejects with plain objects holding a user-facing message (Prisma's Pxxxx errors).
  const e = err as { message?: string; error_code?: string; meta?: unknown };
  return new Error(e?.message ? `${e.error_code ? e.error_code + ': ' : ''}${e.message}` : JSON.stringify(err));
}

/** The migrations folder in the shape the engine reads it (the native CLI reads it the same way). */
export function migrationList(dir = defaultMigrationsDir): MigrationList {
  assertLockFileProvider(dir);
  let lockContent: string | null = null;
  try {
    lockContent = readFileSync(path.join(dir, LOCK_FILE), 'utf8');
  } catch {
    // No lock file yet: the first migration writes it.
  }
  return {
    baseDir: dir,
    lockfile: { path: LOCK_FILE, content: lockContent },
    shadowDbInitScript: '',
    migrationDirectories: readLocalMigrations(dir).map((m) => ({
      path: m.name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: m.script } },
    })),
  };
}

/** Every .prisma file under `dir`, subfolders included, the way the CLI loads a schema folder: one schema. */
export function schemaFiles(dir = defaultSchemaDir): SchemasContainer {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.prisma'))
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile())
    .sort();
  if (!files.length) throw new Error(`no .prisma files in ${dir}`);
  return { files: files.map((file) => ({ path: file, content: readFileSync(file, 'utf8') })) };
}
