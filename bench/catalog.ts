// `npm run bench:catalog [-- --short]`: the tool-catalog lint (lib/catalog/lint.ts), in process, no
// database: --tools definitions shaped like real servers' (bench/lib/catalog.ts, the same on
// every run) linted --runs times, against reading the same definitions once as the console keeps
// them (canonical JSON and its SHA-256), each run timed alternately with the other after a
// warm-up. The target: a lint of 1,000 tools within 200 ms at p95. Beside it, the lint of five
// times as many tools, and of one tool with a 1 MB description.
import { hash } from 'node:crypto';
import { lintCatalog, type ToolDefinition } from '@/lib/catalog/lint';
import { canonicalJson } from '@/lib/json/canonical';
import { catalogOf } from './lib/catalog';
import { int, log, p, readFlags, report, type Figure } from './lib/report';
import { runMain } from './lib/setup';

const flags = readFlags({ tools: [1_000, 1_000], runs: [200, 30] });
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
  report('catalog', undefined, { ...flags, warm: WARM }, figures);
}

runMain(main);
