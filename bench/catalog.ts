// `npm run bench:catalog [-- --short]`, in two parts.
// (1) The tool-catalog lint (lib/catalog/lint.ts), in process, no database: --tools definitions
// shaped like real servers' (bench/lib/catalog.ts, the same on every run) linted --runs times,
// against reading the same definitions once as the console keeps them (canonical JSON and its
// SHA-256), each run timed alternately with the other after a warm-up. The target: a lint of 1,000
// tools within 200 ms at p95. Beside it, the lint of five times as many tools, and of one tool with
// a 1 MB description.
// (2) Pinning at `POST /api/v1/policy/evaluate` (docs/catalog.md "Pinning"), the console started
// on a fresh database: 1,000 full definitions (the largest body the route takes), one client, in
// rounds of three requests in rotating order: the steady state (every definition already pinned,
// nothing written: what every gateway refresh sends), a first sighting (a server never seen, all
// 1,000 pinned), and the ceiling, the same body without its `server` (the route, its JSON and the
// schema of 1,000 definitions, refused 422 before any policy work). The target: the steady state
// within 50 ms at p95. Beside them, where the steady state's time goes: the body's JSON and schema
// and the canonical hashes of the 1,000 definitions in process, and the pinned rows' read through pg.
import { hash } from 'node:crypto';
import { lintCatalog, type ToolDefinition } from '@/lib/catalog/lint';
import { canonicalJson } from '@/lib/json/canonical';
import { definitionHash, pinnedDefinition } from '@/lib/catalog/definition';
import { POLICY_EVALUATE_MAX_TOOLS, policyEvaluateSchema } from '@/lib/approvals/schemas';
import { catalogOf } from './lib/catalog';
import { timedHttp, type Answer } from './lib/http';
import { int, log, p, readFlags, report, type Figure } from './lib/report';
import { createApiKey, freshDatabase, newSecret, runMain, startConsole } from './lib/setup';

const flags = readFlags({ tools: [1_000, 1_000], runs: [200, 30], evaluations: [200, 30] });
const WARM = 10;

/** Milliseconds of `lint` and of `ceiling`, run after run, alternating which goes first. */
function alternate(runs: number, lint: () => unknown, ceiling: () => unknown) {
  const ms = { lint: [] as number[], ceiling: [] as number[] };
  const time = (f: () => unknown) => {
    const started = performance.now();
    f();
    return performance.now() - started;
  };
  for (let r = -WARM; r < runs; r++) {
    const order = r % 2 ? (['lint', 'ceiling'] as const) : (['ceiling', 'lint'] as const);
    for (const what of order) {
      const t = time(what === 'lint' ? lint : ceiling);
      if (r >= 0) ms[what].push(t);
    }
  }
  return { lint: p(ms.lint), ceiling: p(ms.ceiling) };
}

const keep = (tools: ToolDefinition[]) => hash('sha256', canonicalJson(tools), 'hex');

async function main() {
  const tools = catalogOf(flags.tools);
  const findings = lintCatalog(tools);
  log(`${int(flags.tools)} tools, ${findings.length} findings; ${flags.runs} runs each way…`);
  const main = alternate(
    flags.runs,
    () => lintCatalog(tools),
    () => keep(tools),
  );

  const many = catalogOf(5 * flags.tools, 2);
  const manyRuns = Math.max(5, Math.round(flags.runs / 10));
  log(`${int(many.length)} tools, ${manyRuns} runs each way…`);
  const large = alternate(
    manyRuns,
    () => lintCatalog(many),
    () => keep(many),
  );

  const description = 'Returns the weather of a city, only for cities the account may see. '.repeat(15_000);
  const huge: ToolDefinition[] = [{ name: 'get_weather', description, inputSchema: { type: 'object' } }];
  log(`one description of ${(description.length / 1e6).toFixed(1)} MB, ${flags.runs} runs each way…`);
  const long = alternate(
    flags.runs,
    () => lintCatalog(huge),
    () => keep(huge),
  );

  const figures: Figure[] = [
    {
      name: `lint of ${int(flags.tools)} tools, p95`,
      value: main.lint.p95,
      unit: 'ms',
      note: `p50 ${main.lint.p50.toFixed(1)} ms, ${findings.length} findings`,
      ceiling: { name: 'canonical JSON + SHA-256 of them, p95', value: main.ceiling.p95, unit: 'ms' },
      target: { op: '≤', value: 200, unit: 'ms' },
    },
    {
      name: `lint of ${int(many.length)} tools, p95`,
      value: large.lint.p95,
      unit: 'ms',
      note: `p50 ${large.lint.p50.toFixed(1)} ms`,
      ceiling: { name: 'canonical JSON + SHA-256 of them, p95', value: large.ceiling.p95, unit: 'ms' },
    },
    {
      name: `lint of one ${(description.length / 1e6).toFixed(1)} MB description, p95`,
      value: long.lint.p95,
      unit: 'ms',
      note: `p50 ${long.lint.p50.toFixed(1)} ms`,
      ceiling: { name: 'canonical JSON + SHA-256 of it, p95', value: long.ceiling.p95, unit: 'ms' },
    },
  ];
  const pinning = await evaluations();
  report('catalog', pinning.pgVersion, { ...flags, warm: WARM }, [...figures, ...pinning.figures]);
  return pinning.failures;
}

/** Part (2): policy/evaluate with the largest catalog it takes, steady and first seen, over HTTP. */
async function evaluations(): Promise<{ pgVersion: string; figures: Figure[]; failures: number }> {
  const db = await freshDatabase(flags.databaseUrl);
  const key = createApiKey(db, ['approvals:request'], 'bench-gateway');
  const app = await startConsole({ DATABASE_URL: db.url, AUTH_SECRET: newSecret() });
  const tools = catalogOf(POLICY_EVALUATE_MAX_TOOLS);
  const server = 'bench-catalog-mcp';
  const steadyBody = JSON.stringify({ server, tools });
  const ceilingBody = JSON.stringify({ tools });
  log(`policy/evaluate: ${int(tools.length)} definitions, ${(steadyBody.length / 1e6).toFixed(2)} MB a body…`);
  const post = (body: string) =>
    timedHttp(`${app.origin}/api/v1/policy/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
  let failures = 0;
  let sightings = 0;
  const check = (what: string, a: Answer, status: number, held?: boolean) => {
    let fine = a.status === status;
    if (fine && held !== undefined) {
      const answer = JSON.parse(a.body) as { tools: { held: boolean }[] };
      fine = answer.tools.length === tools.length && answer.tools.every((t) => t.held === held);
    }
    if (!fine) {
      failures++;
      console.error(`[bench] ${what}: HTTP ${a.status}, not ${status} as expected: ${a.body.slice(0, 300)}`);
    }
    return a.ms;
  };
  const runs = {
    steady: () => post(steadyBody).then((a) => check('steady state', a, 200, false)),
    first: () =>
      post(JSON.stringify({ server: `bench-new-${++sightings}`, tools })).then((a) =>
        check('first sighting', a, 200, false),
      ),
    ceiling: () => post(ceilingBody).then((a) => check('the ceiling', a, 422)),
  };
  check('the first report', await post(steadyBody), 200, false);
  const ms = { steady: [] as number[], first: [] as number[], ceiling: [] as number[] };
  const order = ['steady', 'first', 'ceiling'] as const;
  for (let r = -WARM; r < flags.evaluations; r++) {
    for (let k = 0; k < order.length; k++) {
      const what = order[((((r % 3) + 3) % 3) + k) % 3];
      const t = await runs[what]();
      if (r >= 0) ms[what].push(t);
    }
  }
  const written = (
    await db.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tool_definitions WHERE server = $1 AND accepted_hash IS NOT NULL AND held_hash IS NULL`,
      [server],
    )
  ).rows[0].n;
  if (written !== tools.length) {
    failures++;
    console.error(`[bench] ${written} of ${tools.length} definitions pinned as accepted`);
  }

  // Where the steady state's time goes, apart from HTTP: the body's schema, the hashes, the read.
  log(`the parts: the schema and the hashes in process, the pinned rows through pg, ${flags.evaluations} runs each…`);
  const names = JSON.stringify(tools.map((t) => t.name));
  const parts = { schema: [] as number[], hash: [] as number[], read: [] as number[] };
  for (let r = -WARM; r < flags.evaluations; r++) {
    let t0 = performance.now();
    if (!policyEvaluateSchema.safeParse(JSON.parse(steadyBody)).success) throw new Error('the body is refused');
    if (r >= 0) parts.schema.push(performance.now() - t0);
    t0 = performance.now();
    for (const t of tools) definitionHash(pinnedDefinition(t));
    if (r >= 0) parts.hash.push(performance.now() - t0);
    t0 = performance.now();
    await db.sql.query(
      `SELECT t.tool_name, t.accepted_hash, t.held_hash FROM tool_definitions t
       WHERE t.server = $1 AND t.tool_name IN (SELECT jsonb_array_elements_text($2::jsonb))`,
      [server, names],
    );
    if (r >= 0) parts.read.push(performance.now() - t0);
  }

  const [steady, first, ceiling] = [p(ms.steady), p(ms.first), p(ms.ceiling)];
  const ceilingName = 'the same body without `server`, refused 422, p95';
  const figures: Figure[] = [
    {
      name: `policy/evaluate, ${int(tools.length)} definitions, steady state, p95`,
      value: steady.p95,
      unit: 'ms',
      note: `p50 ${steady.p50.toFixed(1)} ms`,
      ceiling: { name: ceilingName, value: ceiling.p95, unit: 'ms' },
      target: { op: '≤', value: 50, unit: 'ms' },
    },
    {
      name: `  first sighting (all ${int(tools.length)} new), p95`,
      value: first.p95,
      unit: 'ms',
      note: `p50 ${first.p50.toFixed(1)} ms`,
      ceiling: { name: ceilingName, value: ceiling.p95, unit: 'ms' },
    },
    {
      name: `  its body parsed and checked by the route's schema, in process, p95`,
      value: p(parts.schema).p95,
      unit: 'ms',
      note: `p50 ${p(parts.schema).p50.toFixed(1)} ms`,
    },
    {
      name: `  its canonical hashes, in process, p95`,
      value: p(parts.hash).p95,
      unit: 'ms',
      note: `p50 ${p(parts.hash).p50.toFixed(1)} ms`,
    },
    {
      name: `  its read of the pinned rows through pg, p95`,
      value: p(parts.read).p95,
      unit: 'ms',
      note: `p50 ${p(parts.read).p50.toFixed(1)} ms`,
    },
  ];
  log(`the ceiling's p50: ${ceiling.p50.toFixed(1)} ms`);
  return { pgVersion: db.pgVersion, figures, failures };
}

runMain(async () => ((await main()) ? 1 : 0));
