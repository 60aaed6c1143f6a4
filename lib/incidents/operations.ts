// What an incident counts as one operation (docs/design.md "Resolving an unknown"). Pure.
//
// The same definition as the resolution by a later record (lib/server/outcomes/resolution-sql.ts),
// so the summary never calls done what the records still hold unknown: records of one
// organization, server and tool under the same idempotency key AND the same argument digest, or
// records of one organization's MCP task. A missing key, digest or task id links nothing, so such
// a record is an operation of its own unless its task links it; other arguments under one key are
// another operation. Links are transitive: a task started under a key, its later statuses without
// one, and every other attempt under that key and digest are one operation.
import { inTimeOrder, type IncidentRecord } from './types';

/** The operations of some records: each its records in time order, the operations by their first. */
export function operationsOf<T extends IncidentRecord>(records: readonly T[]): T[][] {
  const sorted = inTimeOrder(records);
  // Union-find over positions in time order; a root is always the earliest record it holds.
  const parent = sorted.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const firstWith = new Map<string, number>();
  sorted.forEach((r, i) => {
    for (const link of links(r)) {
      const seen = firstWith.get(link);
      if (seen === undefined) {
        firstWith.set(link, i);
        continue;
      }
      const [a, b] = [root(seen), root(i)];
      parent[Math.max(a, b)] = Math.min(a, b);
    }
  });
  const operations = new Map<number, T[]>();
  sorted.forEach((r, i) => {
    const op = operations.get(root(i));
    if (op) op.push(r);
    else operations.set(root(i), [r]);
  });
  return [...operations.values()];
}

/** The task that links an operation's records, if any does. */
export const taskOf = (records: readonly IncidentRecord[]) =>
  records.map((r) => r.observed?.task?.id).find(Boolean) ?? null;

// Within one request reference, so records of two incidents given together stay apart.
function links(r: IncidentRecord): string[] {
  const out: string[] = [];
  if (r.idempotencyKey && r.argsDigest) {
    out.push(
      JSON.stringify(['key', r.requestRef, r.organization, r.server, r.tool.name, r.idempotencyKey, r.argsDigest]),
    );
  }
  const task = r.observed?.task?.id;
  if (task) out.push(JSON.stringify(['task', r.requestRef, r.organization, task]));
  return out;
}
