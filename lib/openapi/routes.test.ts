// The guard: every route file under app/api/v1 is in the registry the reference is generated from,
// with the methods it exports, the action it checks and the very schemas it validates with; and
// every registry entry has its route file (the OTLP route may still be absent, see its entry).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as approvalSchemas from '@/lib/approvals/schemas';
import * as catalogSchemas from '@/lib/catalog/schemas';
import * as incidentQuery from '@/lib/incidents/query';
import * as serverSchemas from '@/lib/mcp-servers/schemas';
import * as outcomeQuery from '@/lib/outcomes/query';
import * as outcomeSchemas from '@/lib/outcomes/schemas';
import * as resolutionSchemas from '@/lib/outcomes/resolution';
import * as guardSchemas from '@/lib/guards/schemas';
import { apiRoutes, methods } from './routes';
import * as ex from './examples';

const ROOT = path.resolve('app/api/v1');

// The modules route files import their validators from, by the specifier they use.
const schemaModules: Record<string, Record<string, unknown>> = {
  '@/lib/approvals/schemas': approvalSchemas,
  '@/lib/catalog/schemas': catalogSchemas,
  '@/lib/incidents/query': incidentQuery,
  '@/lib/mcp-servers/schemas': serverSchemas,
  '@/lib/outcomes/query': outcomeQuery,
  '@/lib/outcomes/schemas': outcomeSchemas,
  '@/lib/outcomes/resolution': resolutionSchemas,
  '@/lib/guards/schemas': guardSchemas,
};

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? routeFiles(path.join(dir, d.name)) : d.name === 'route.ts' ? [path.join(dir, d.name)] : [],
  );
}

/** `app/api/v1/approvals/[id]/route.ts` → `/approvals/{id}`. */
const apiPath = (file: string) =>
  '/' +
  path
    .relative(ROOT, path.dirname(file))
    .split(path.sep)
    .filter((s) => s && !/^\(.*\)$/.test(s))
    .map((s) => s.replace(/^\[(.+)\]$/, '{$1}'))
    .join('/');

type Exported = { action: string | null; body: unknown; query: unknown };

/** What each exported method of a route file passes to apiRoute: action, body and query schemas. */
function exportsOf(source: string): Record<string, Exported> {
  const imported = new Map<string, Record<string, unknown>>();
  for (const m of source.matchAll(/import\s*\{([^}]+)\}\s*from\s*'([^']+)'/g))
    for (const name of m[1].split(',').map((n) => n.trim()))
      if (name && schemaModules[m[2]]) imported.set(name, schemaModules[m[2]]);
  const resolve = (name: string | undefined) => {
    if (!name) return undefined;
    const mod = imported.get(name);
    if (!mod || !(name in mod)) throw new Error(`cannot resolve the schema ${name}`);
    return mod[name];
  };
  const out: Record<string, Exported> = {};
  const parts = source.split(/export (?:const|async function|function) /).slice(1);
  for (const part of parts) {
    const method = /^(\w+)/.exec(part)?.[1] ?? '';
    if (!(methods as readonly string[]).includes(method)) continue;
    // Up to the handler: the options object of apiRoute.
    const options = part.split('=>')[0];
    out[method] = {
      action: /action:\s*'([\w.]+)'/.exec(options)?.[1] ?? null,
      body: resolve(/body:\s*(\w+)/.exec(options)?.[1]),
      query: resolve(/query:\s*(\w+)/.exec(options)?.[1]),
    };
  }
  return out;
}

const files = new Map(routeFiles(ROOT).map((f) => [apiPath(f), f]));

describe('the route registry (guard)', () => {
  it('finds the route files (so the comparisons below compare something)', () => {
    expect(files.get('/outcomes')).toMatch(/app\/api\/v1\/outcomes\/route\.ts$/);
    expect(files.get('/approvals/{id}/decisions')).toBeDefined();
    expect(files.size).toBeGreaterThanOrEqual(12);
  });

  it('has an entry for every route file under app/api/v1', () => {
    const documented = new Set(apiRoutes.map((r) => r.path));
    expect([...files.keys()].filter((p) => !documented.has(p))).toEqual([]);
  });

  it('has a route file for every entry (the OTLP route may still be on its way)', () => {
    const missing = apiRoutes.filter((r) => !files.has(r.path)).map((r) => r.path);
    expect(missing).toEqual([]);
  });

  for (const [apiPathName, file] of files) {
    it(`${apiPathName}: the same methods, actions and schemas as its route file`, () => {
      const entry = apiRoutes.find((r) => r.path === apiPathName);
      if (!entry) return; // reported by the test above
      const exported = exportsOf(readFileSync(file, 'utf8'));
      expect(Object.keys(entry.operations).sort()).toEqual(Object.keys(exported).sort());
      for (const [method, e] of Object.entries(exported)) {
        const op = entry.operations[method as keyof typeof entry.operations]!;
        expect(op.action, `${method} action`).toBe(e.action);
        // The same objects the route validates with: documented, never restated.
        expect(op.body === e.body, `${method} body is the route's own schema`).toBe(true);
        expect(op.query === e.query, `${method} query is the route's own schema`).toBe(true);
      }
    });
  }

  it('path parameters are exactly the dynamic segments', () => {
    for (const r of apiRoutes) {
      const segments = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(Object.keys(r.params ?? {}).sort(), r.path).toEqual(segments);
    }
  });
});

describe('the examples', () => {
  const cases: [string, { safeParse(v: unknown): { success: boolean } }, unknown][] = [
    ['outcomes', outcomeSchemas.outcomeBatchSchema, ex.outcomeBatchExample],
    ['approval request', approvalSchemas.approvalRequestSchema, ex.approvalRequestExample],
    ['decision', approvalSchemas.decisionSchema, ex.decisionExample],
    ['revoke', approvalSchemas.revokeSchema, ex.revokeExample],
    ['withdraw', approvalSchemas.revokeSchema, ex.withdrawExample],
    ['redeem', approvalSchemas.redeemSchema, ex.redeemExample],
    ['trust', serverSchemas.trustServerSchema, ex.trustServerExample],
    ['policy evaluate', approvalSchemas.policyEvaluateSchema, ex.policyEvaluateExample],
    ['accept a tool', catalogSchemas.acceptToolSchema, ex.acceptToolExample],
    ['state check', resolutionSchemas.stateCheckBodySchema, ex.stateCheckExample],
    ['guard check', guardSchemas.guardCheckSchema, ex.guardCheckExample],
  ];
  it.each(cases)('the %s example is accepted by its schema', (_, schema, example) => {
    expect(schema.safeParse(example).success).toBe(true);
  });

  it('every documented body example is one of those checked above', () => {
    const checked = new Set(cases.map(([, , e]) => e));
    checked.add(ex.otlpJsonExample);
    const documented = apiRoutes.flatMap((r) => Object.values(r.operations).map((o) => o?.bodyExample));
    expect(documented.filter((e) => e !== undefined && !checked.has(e))).toEqual([]);
  });
});
