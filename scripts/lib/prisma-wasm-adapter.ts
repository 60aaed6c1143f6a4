// The database side of the WebAssembly schema engine: a driver-adapter factory built on
// @prisma/adapter-pg, with what it takes for the engine to work against PostgreSQL: "char"
// columns, whole-script execution, and shadow databases that are really separate and
// really dropped.
import { randomBytes } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  ColumnTypeEnum,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlQueryable,
  type SqlResultSet,
  type Transaction,
} from '@prisma/driver-adapter-utils';
import pg from 'pg';

const CHAR_OID = 18; // Postgres' one-byte internal "char" (pg_class.relkind and friends)
const TEXT_OID = 25;

// The engine's catalogue queries return "char" columns and expect them typed as
// Character, but the pg adapter has no mapping for that type and refuses the whole
// result ("Unsupported column type char"). So the connection relabels such columns as
// text, which the adapter accepts (the text form of a "char" is the character itself),
// and remembers which ones they were, keyed by the rows array the adapter passes on
// untouched; queryRaw below then reports them as Character.
const charColumnsOf = new WeakMap<object, number[]>();

function relabelCharColumns(result: pg.QueryResult | pg.QueryResult[] | undefined): void {
  for (const one of Array.isArray(result) ? result : [result]) {
    const charColumns: number[] = [];
    one?.fields?.forEach((field, i) => {
      if (field.dataTypeID !== CHAR_OID) return;
      field.dataTypeID = TEXT_OID;
      charColumns.push(i);
    });
    if (one && charColumns.length) charColumnsOf.set(one.rows, charColumns);
  }
}

class CatalogFriendlyClient extends pg.Client {
  // The adapter reaches this both as a promise (in transactions) and with a callback
  // (pool.query), so both forms are covered; pg's many overloads are not restated here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(...args: any[]): any {
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last];
      args[last] = (err: Error | null, result: pg.QueryResult) => {
        if (!err) relabelCharColumns(result);
        callback(err, result);
      };
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const pending = (super.query as (...a: any[]) => any)(...args);
    if (!pending || typeof pending.then !== 'function') return pending;
    return pending.then((result: pg.QueryResult) => {
      relabelCharColumns(result);
      return result;
    });
  }
}

function withCharColumns<Q extends SqlQueryable>(queryable: Q): Q {
  return Object.assign(Object.create(queryable) as Q, {
    queryRaw: async (query: SqlQuery): Promise<SqlResultSet> => {
      const result = await queryable.queryRaw(query);
      for (const i of charColumnsOf.get(result.rows) ?? []) result.columnTypes[i] = ColumnTypeEnum.Character;
      return result;
    },
  });
}

// Wraps the pg adapter's connection for the engine. Besides the "char" columns: the
// adapter's executeScript splits a script on every ";", which cuts dollar-quoted function
// bodies (our init migration has one) in half. A parameterless query goes out with the
// simple-query protocol, where Postgres itself splits the statements, as with the native
// engine.
function forEngine(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const wrapped = withCharColumns(adapter);
  return Object.assign(wrapped, {
    executeScript: async (script: string) => {
      await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
    },
    startTransaction: async (isolationLevel?: IsolationLevel): Promise<Transaction> =>
      withCharColumns(await adapter.startTransaction(isolationLevel)),
  });
}

function databaseUrl(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = '/' + encodeURIComponent(database);
  return url.toString();
}

const quoteIdent = (name: string) => '"' + name.replaceAll('"', '""') + '"';

/** Runs `work` on a connection to the server of `connectionString`, for CREATE/DROP DATABASE. */
export async function withServer<T>(connectionString: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  try {
    await client.connect();
  } catch (err) {
    // The named database may not exist yet (a developer's first run); any database
    // on the server will do for server-level statements.
    const missing = (err as { code?: string }).code === '3D000';
    if (!missing || new URL(connectionString).pathname === '/postgres') throw err;
    return withServer(databaseUrl(connectionString, 'postgres'), work);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export type ScratchDatabase = { url: string; drop(): Promise<void> };

/** A database on the same server as `connectionString`, with a name nobody else uses. */
export async function createScratchDatabase(connectionString: string, purpose: string): Promise<ScratchDatabase> {
  const name = `cs_${purpose}_${Date.now()}_${randomBytes(4).toString('hex')}`;
  await withServer(connectionString, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  return {
    url: databaseUrl(connectionString, name),
    // FORCE: pooled connections the engine opened may still be around when we get here.
    drop: () =>
      withServer(connectionString, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)).then(
        () => {},
      ),
  };
}

function pgAdapterFactory(url: string): PrismaPg {
  return new PrismaPg({ connectionString: url, Client: CatalogFriendlyClient });
}

export type EngineAdapterFactory = SqlMigrationAwareDriverAdapterFactory & {
  /** Closes every connection this factory opened and drops the shadow databases left. */
  cleanup(): Promise<void>;
};

/**
 * The adapter factory handed to the schema engine: `connect()` reaches the database at
 * `connectionString`; `connectToShadowDb()` creates a fresh database on the same server.
 * The engine does not reliably dispose of what it opened (not after a failed command or
 * a panic, nor its main connection when freed), so cleanup() finishes the job.
 */
export function engineAdapterFactory(connectionString: string): EngineAdapterFactory {
  const main = pgAdapterFactory(connectionString);
  const open = new Set<() => Promise<void>>();

  // Runs `release` once, whether the engine or cleanup() asks first.
  const track = (release: () => Promise<void>) => {
    const once = async () => {
      if (open.delete(once)) await release();
    };
    open.add(once);
    return once;
  };

  return {
    provider: main.provider,
    adapterName: main.adapterName,
    async connect() {
      const adapter = await main.connect();
      return Object.assign(forEngine(adapter), { dispose: track(() => adapter.dispose()) });
    },
    async connectToShadowDb() {
      // Built from a URL of its own rather than via PrismaPg's shadow support, which
      // reuses the main connection string and so lands in the main database.
      const shadow = await createScratchDatabase(connectionString, 'shadow');
      const dropShadow = track(() => shadow.drop());
      const adapter = await pgAdapterFactory(shadow.url).connect();
      const closeShadow = track(() => adapter.dispose());
      return Object.assign(forEngine(adapter), {
        dispose: async () => {
          await closeShadow();
          await dropShadow();
        },
      });
    },
    async cleanup() {
      // Connections first, so that dropping a shadow database finds nobody in it.
      const releases = [...open];
      for (const release of releases.reverse()) await release();
    },
  };
}
