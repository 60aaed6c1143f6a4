// prisma/functions.sql shows the current body of every SQL function and trigger, so that nobody
// has to replay the migrations to read one. This keeps it true: in a transaction that is rolled
// back, on this file's freshly migrated database, every function and trigger is dropped and the
// file is run in their place; the catalog must then say exactly what it said before (PostgreSQL's
// own pg_get_functiondef and pg_get_triggerdef, whitespace aside). A body, a signature, a volatility
// or a trigger's event that differs, a function or trigger the file lacks or adds: each is reported.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '@/lib/config';

const FILE = fileURLToPath(new URL('../../../prisma/functions.sql', import.meta.url));
const fileText = readFileSync(FILE, 'utf8');

type Statement = {
  kind: 'function' | 'trigger';
  /** The function's name, or the trigger's as `table.trigger` (the catalog's keys). */
  name: string;
  line: number;
  /** The comment lines right above the statement (no blank line between). */
  comment: string[];
};

/**
 * The file's statements, split at semicolons outside comments, quoted strings and identifiers, and
 * dollar-quoted bodies. Throws on a statement that is neither a function nor a trigger: the file
 * holds definitions only.
 */
function parseStatements(text: string): Statement[] {
  const statements: Statement[] = [];
  let start = 0;
  const dollarTag = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;
  const lineAt = (offset: number) => text.slice(0, offset).split('\n').length;

  const take = (end: number) => {
    const chunk = text.slice(start, end);
    const lines = chunk.split('\n');
    let comment: string[] = [];
    let first = 0;
    for (; first < lines.length; first++) {
      const line = lines[first].trim();
      if (line.startsWith('--')) comment.push(line);
      else if (line === '') comment = [];
      else break;
    }
    const sql = lines.slice(first).join('\n').trim();
    const line = lineAt(start) + first;
    const fn = /^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(?:public\.)?"?(\w+)"?\s*\(/i.exec(sql);
    const trigger = /^CREATE\s+(?:OR\s+REPLACE\s+)?TRIGGER\s+"?(\w+)"?\s[\s\S]*?\sON\s+(?:public\.)?"?(\w+)"?\s/i.exec(
      sql,
    );
    if (fn) statements.push({ kind: 'function', name: fn[1], line, comment });
    else if (trigger) statements.push({ kind: 'trigger', name: `${trigger[2]}.${trigger[1]}`, line, comment });
    else throw new Error(`prisma/functions.sql line ${line}: neither CREATE FUNCTION nor CREATE TRIGGER: ${sql}`);
  };

  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new Error(`prisma/functions.sql line ${lineAt(i)}: unterminated comment`);
      i = end + 2;
    } else if (ch === "'" || ch === '"') {
      // E'...' strings may escape their quote with a backslash; other strings only by doubling it.
      const backslashes = ch === "'" && /[Ee]/.test(text[i - 1] ?? '') && !/\w/.test(text[i - 2] ?? '');
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw new Error(`prisma/functions.sql line ${lineAt(i)}: unterminated ${ch}`);
        if (backslashes && text[j] === '\\') j += 2;
        else if (text[j] === ch && text[j + 1] === ch) j += 2;
        else if (text[j] === ch) break;
        else j++;
      }
      i = j + 1;
    } else if (ch === '$' && !/\w/.test(text[i - 1] ?? '')) {
      dollarTag.lastIndex = i;
      const tag = dollarTag.exec(text)?.[0];
      if (!tag) {
        i++;
        continue;
      }
      const end = text.indexOf(tag, i + tag.length);
      if (end < 0) throw new Error(`prisma/functions.sql line ${lineAt(i)}: unterminated ${tag}`);
      i = end + tag.length;
    } else if (ch === ';') {
      take(i);
      start = ++i;
    } else {
      i++;
    }
  }
  const rest = text
    .slice(start)
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('--'));
  if (rest.length) throw new Error(`prisma/functions.sql ends with a statement lacking its semicolon: ${rest[0]}`);
  return statements;
}

/** Every function and trigger the catalog holds outside the system schemas, except extensions'. */
async function catalog(client: pg.Client) {
  const functions = await client.query<{ key: string; name: string; oid: number; kind: string; def: string }>(`
    SELECT p.oid::regprocedure::text AS key, p.proname AS name, p.oid, p.prokind AS kind,
           CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) ELSE p.prokind::text END AS def
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d
                      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`);
  // Only a trigger's own definition: the clones PostgreSQL makes on each partition follow it.
  const triggers = await client.query<{ key: string; table: string; name: string; def: string }>(`
    SELECT c.relname || '.' || t.tgname AS key, t.tgrelid::regclass::text AS table, t.tgname AS name,
           pg_get_triggerdef(t.oid)
             || CASE t.tgenabled WHEN 'O' THEN '' ELSE ' /* enabled: ' || t.tgenabled::text || ' */' END AS def
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE NOT t.tgisinternal AND t.tgparentid = 0
      AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'`);
  return { functions: functions.rows, triggers: triggers.rows };
}

// Indentation and line breaks are the file's to choose; every other character counts.
const normalize = (def: string) => def.replace(/\s+/g, ' ').trim();

/** Where two normalized definitions part, with some context on each side. */
function firstDifference(file: string, db: string): string {
  let i = 0;
  while (i < file.length && i < db.length && file[i] === db[i]) i++;
  const around = (s: string) => s.slice(Math.max(0, i - 60), i + 60);
  return `\n    file:     …${around(file)}…\n    database: …${around(db)}…`;
}

/**
 * Runs `sql` in place of every function and trigger of the migrated database, inside a transaction
 * that is rolled back, and answers how the result differs from the migrated definitions: one line per
 * function or trigger missing, extra or different (none when they agree).
 */
async function differences(client: pg.Client, sql: string): Promise<string[]> {
  const statements = parseStatements(sql);
  const lineOf = (kind: Statement['kind'], name: string) => {
    const found = statements.find((s) => s.kind === kind && s.name === name);
    return found ? ` (prisma/functions.sql line ${found.line})` : '';
  };
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL search_path = public');
    const migrated = await catalog(client);
    const drops = [
      ...migrated.triggers.map((t) => `DROP TRIGGER ${pg.escapeIdentifier(t.name)} ON ${t.table};`),
      ...migrated.functions.map((f) =>
        f.kind === 'a' ? `DROP AGGREGATE ${f.key} CASCADE;` : `DROP ROUTINE ${f.key} CASCADE;`,
      ),
    ];
    await client.query(drops.join('\n'));
    try {
      await client.query(sql);
    } catch (err) {
      const e = err as pg.DatabaseError;
      const at = Number(e.position) > 0 ? ` at line ${sql.slice(0, Number(e.position) - 1).split('\n').length}` : '';
      return [`prisma/functions.sql fails${at}: ${e.message}`];
    }
    const fromFile = await catalog(client);

    const found: string[] = [];
    const compare = (
      kind: Statement['kind'],
      expected: { key: string; name: string; def: string }[],
      actual: { key: string; name: string; def: string }[],
      fileName: (row: { key: string; name: string }) => string,
    ) => {
      const byKey = new Map(actual.map((row) => [row.key, row]));
      for (const row of expected) {
        const mine = byKey.get(row.key);
        if (!mine) found.push(`${kind} ${row.key} is in the migrated database, not in prisma/functions.sql`);
        else if (normalize(mine.def) !== normalize(row.def)) {
          const where = firstDifference(normalize(mine.def), normalize(row.def));
          found.push(`${kind} ${row.key} differs${lineOf(kind, fileName(row))}:${where}`);
        }
        byKey.delete(row.key);
      }
      for (const row of byKey.values())
        found.push(
          `${kind} ${row.key}${lineOf(kind, fileName(row))} is in prisma/functions.sql, not in the migrations`,
        );
    };
    compare('function', migrated.functions, fromFile.functions, (row) => row.name);
    compare('trigger', migrated.triggers, fromFile.triggers, (row) => row.key);

    // CREATE OR REPLACE of the same signature twice leaves one function: the first would be dead text.
    const created = statements.filter((s) => s.kind === 'function').length;
    if (created !== fromFile.functions.length)
      found.push(
        `prisma/functions.sql has ${created} CREATE FUNCTION statements for ${fromFile.functions.length} functions`,
      );
    return found;
  } finally {
    await client.query('ROLLBACK');
  }
}

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: config().DATABASE_URL });
  await client.connect();
});
afterAll(() => client?.end());

describe('prisma/functions.sql', () => {
  it('defines exactly the functions and triggers the migrations leave in the database', async () => {
    expect(await differences(client, fileText)).toEqual([]);
  });

  it('says why each function and trigger exists, in a comment right above it', () => {
    const uncommented = parseStatements(fileText).filter((s) => s.comment.length === 0);
    expect(uncommented.map((s) => `${s.kind} ${s.name} (line ${s.line})`)).toEqual([]);
  });

  it('begins by saying it is kept equal to the migrations by this test', () => {
    expect(fileText.split('\n\n')[0]).toMatch(/sql-functions\.test\.ts/);
  });

  // The comparison itself must be able to fail: the file altered in each way it could drift. Each
  // case looks only at what it altered, so that a file that has drifted fails the test above alone.
  describe('the comparison notices', () => {
    const statements = parseStatements(fileText);
    const firstFunction = statements.find((s) => s.kind === 'function')!.name;
    const aTrigger = statements.find((s) => s.kind === 'trigger')!.name;
    const [table, trigger] = aTrigger.split('.');
    const about = (found: string[], prefix: string) => found.filter((line) => line.startsWith(prefix));

    it('a function body edited', async () => {
      // A token added to the first function's body, right after its opening dollar quote.
      const edited = fileText.replace(/(CREATE OR REPLACE FUNCTION [\s\S]*? AS \$\$)/, '$1\n-- edited');
      expect(edited).not.toBe(fileText);
      const found = about(await differences(client, edited), `function ${firstFunction}(`);
      expect(found).toEqual([expect.stringMatching(/\) differs \(prisma\/functions\.sql line \d+\):/)]);
    });

    it('a trigger left out', async () => {
      const without = fileText.replace(new RegExp(`CREATE TRIGGER ${trigger} [^;]*;`), '');
      expect(without).not.toBe(fileText);
      expect(about(await differences(client, without), `trigger ${aTrigger} `)).toEqual([
        `trigger ${table}.${trigger} is in the migrated database, not in prisma/functions.sql`,
      ]);
    });

    it('a trigger that fires on other events', async () => {
      const changed = fileText.replace(new RegExp(`(CREATE TRIGGER ${trigger} \\w+) [^;]*? ON`), '$1 INSERT ON');
      expect(changed).not.toBe(fileText);
      const found = about(await differences(client, changed), `trigger ${aTrigger} `);
      expect(found).toEqual([expect.stringMatching(/ differs \(prisma\/functions\.sql line \d+\):/)]);
    });

    it('a function the migrations do not define', async () => {
      const extra = `${fileText}\n-- Not in any migration.\nCREATE FUNCTION not_migrated() RETURNS int LANGUAGE sql AS 'SELECT 1';\n`;
      expect(about(await differences(client, extra), 'function not_migrated(')).toEqual([
        expect.stringMatching(/ is in prisma\/functions\.sql, not in the migrations$/),
      ]);
    });
  });
});
