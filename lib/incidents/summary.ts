// What was and was not done in an incident (docs/api.md "Incidents": `summary`). Pure.
//
// One sentence per operation (lib/incidents/operations.ts: one idempotency key with one argument
// digest, or one MCP task; without a key, one attempt), so the later completion of one operation
// never hides another that is unknown. Rules where docs/design.md is silent:
// - Any completed + ok attempt makes the operation done: a later refusal does not undo a write.
// - Otherwise, an attempt at a write that may have taken effect (delivery unknown, or completed
//   with output_schema_violation: it ran, but its content is no evidence) makes it unknown.
// - Otherwise the latest attempt decides: refused or never sent is not done; a read-only call
//   that got no usable answer (unknown, or a result breaking its schema) is not done either,
//   since a read changes nothing.
// - A resolved unknown (a later record of the same operation, or a state check) is no longer
//   unknown: "happened" makes the operation done, "did not happen" leaves it to the other attempts;
//   the sentence says how it was resolved and by whom. Only unresolved unknowns are "check before
//   repeating".
import type { Classification } from '@/lib/outcomes/schemas';
import { resolvedHow, verdictLabel } from '@/lib/outcomes/resolution';
import { operationsOf, taskOf } from './operations';
import { callName, type IncidentRecord, type IncidentSummary } from './types';

export type { IncidentSummary };

export function summarizeIncident(records: readonly IncidentRecord[]): IncidentSummary {
  const summary: IncidentSummary = { done: [], notDone: [], unknown: [], unknownTools: [] };
  for (const attempts of operationsOf(records)) {
    const { list, sentence } = describe(attempts);
    summary[list].push(sentence);
    if (list === 'unknown' && !summary.unknownTools.includes(attempts[0].tool.name)) {
      summary.unknownTools.push(attempts[0].tool.name);
    }
  }
  return summary;
}

const isOk = (c: Classification) => c.delivery === 'completed' && c.category === 'ok';
const ranUnclear = (c: Classification) => c.delivery === 'completed' && c.category === 'output_schema_violation';
const mayHaveActed = (c: Classification) => !c.readOnly && (c.delivery === 'unknown' || ranUnclear(c));

function describe(attempts: IncidentRecord[]): { list: 'done' | 'notDone' | 'unknown'; sentence: string } {
  const first = attempts[0];
  const summary = attempts.map((r) => oneLine(r.summary)).find(Boolean);
  const head = `${callName(first)}${summary ? `: ${summary}` : ''}`;
  const task = taskOf(attempts);
  // A task's later records are its statuses and its result, not new attempts.
  const count =
    attempts.length > 1 ? (task ? `${attempts.length} records of task ${task}` : `${attempts.length} attempts`) : null;
  const keyed = attempts.find((r) => r.idempotencyKey)?.idempotencyKey;
  const key = keyed ? `key ${keyed}` : null;

  const success = attempts.find((r) => isOk(r.classification));
  const settled = attempts.filter((r) => r.resolution && mayHaveActed(r.classification));
  const resolvedAs = settled.length
    ? settled
        .map((r) => {
          const note = oneLine(r.resolution!.note);
          return `${verdictLabel[r.resolution!.verdict]}, resolved ${resolvedHow(r.resolution!)}${note ? `: ${note}` : ''}`;
        })
        .join('; ')
    : null;
  const happened = settled.find((r) => r.resolution!.verdict === 'happened');
  if (happened && !success) {
    return { list: 'done', sentence: head + paren(count, key, resolvedAs) };
  }
  if (success) {
    const read = success.classification.readOnly ? 'read' : null;
    return { list: 'done', sentence: head + paren(read, count, resolvedAs) };
  }

  const uncertain = attempts.filter((r) => mayHaveActed(r.classification) && !r.resolution).at(-1);
  if (uncertain) {
    const c = uncertain.classification;
    const why = ranUnclear(c) ? 'it ran, but its result is no evidence of what was done' : 'it may have taken effect';
    return {
      list: 'unknown',
      sentence: `${head}${paren(label(c.category), count, key)}: ${why}; check before repeating`,
    };
  }

  // Every attempt that may have acted was resolved as not done: the operation is not done.
  const last = attempts.at(-1)!;
  if (last.resolution) return { list: 'notDone', sentence: head + paren(count, key, resolvedAs) };
  const c = last.classification;
  return { list: 'notDone', sentence: head + paren(`${notDoneAs(c)}: ${label(c.category)}`, count, resolvedAs) };
}

function notDoneAs(c: Classification): string {
  if (c.delivery === 'never_sent') return 'never sent';
  // Only read-only calls reach here with these: a write that may have run is unknown.
  if (c.delivery === 'completed') return 'read result unusable';
  if (c.delivery === 'unknown' || UNCERTAIN.has(c.category)) return 'read failed';
  return 'refused';
}

// Failures after sending that may have taken effect, were the call not read-only.
const UNCERTAIN = new Set<Classification['category']>([
  'upstream_failure',
  'internal',
  'tool_error',
  'timeout',
  'connection_lost',
  'cancelled',
  'no_response',
]);

const label = (c: Classification['category']) => c.replaceAll('_', ' ');
const oneLine = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

function paren(...parts: (string | null)[]): string {
  const present = parts.filter(Boolean);
  return present.length ? ` (${present.join('; ')})` : '';
}

/**
 * The one sentence of what was and was not done, e.g.
 * "2 operations done, 1 not done, 1 unknown: check before repeating cancel_order."
 */
export function oneSentence(
  summary: Pick<IncidentSummary, 'done' | 'notDone' | 'unknown'> & { unknownTools?: string[] },
): string {
  const counts: [number, string][] = [
    [summary.done.length, 'done'],
    [summary.notDone.length, 'not done'],
    [summary.unknown.length, 'unknown'],
  ];
  const present = counts.filter(([n]) => n > 0);
  if (!present.length) return 'No operations were recorded.';
  const parts = present.map(([n, what], i) =>
    i === 0 ? `${n} ${n === 1 ? 'operation' : 'operations'} ${what}` : `${n} ${what}`,
  );
  let sentence = parts.join(', ');
  if (!summary.done.length && !summary.unknown.length) sentence = `Nothing was done: ${sentence}`;
  if (summary.unknown.length) {
    const tools = summary.unknownTools ?? [];
    const which = tools.length ? joinAnd(tools) : summary.unknown.length === 1 ? 'it' : 'them';
    sentence += `: check before repeating ${which}`;
  }
  return `${sentence}.`;
}

function joinAnd(items: string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)}` : items[0];
}
