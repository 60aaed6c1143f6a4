// Realistic, valid outcome records (the demo stories: every classification row, masked
// e-mails and phone numbers in summaries, multi-attempt idempotency keys), turned into request
// bodies ahead of time. A body is a template split on a marker, so each send gets unique
// eventIds, requestRefs and idempotency keys for the price of one string join, not a stringify.
import { demoOutcomes } from '../../scripts/demo-outcomes';
import type { Outcome } from '@/lib/outcomes/schemas';

const MARK = '~T~';

/** About 1,300 distinct records from the demo stories, each with a session id. */
export function recordPool(): Outcome[] {
  return demoOutcomes(Date.now(), 400).map((r) => ({ ...r, sessionId: `sess_${r.requestRef}` }));
}

/** What a body's records look like when the marker is replaced by a batch's unique tag. */
function stamped(r: Outcome, i: number): Outcome {
  return {
    ...r,
    eventId: `evt_${MARK}_${i}`,
    requestRef: `${r.requestRef}_${MARK}`,
    idempotencyKey: r.idempotencyKey && `${r.idempotencyKey}_${MARK}`,
    sessionId: `${r.sessionId}_${MARK}`,
    // An MCP task's id names one task: a batch's tasks are its own (else every batch would
    // share the demo's tasks, their operation locks and their resolution joins).
    observed: r.observed.task
      ? { ...r.observed, task: { ...r.observed.task, id: `${r.observed.task.id}_${MARK}` } }
      : r.observed,
  };
}

export type Bodies = { next: (tag: string) => string; size: number };

/** `count` different bodies of `size` records each; `next(tag)` cycles through them. */
export function bodies(pool: Outcome[], size: number, count: number): Bodies {
  const templates = Array.from({ length: count }, (_, t) => {
    const records = Array.from({ length: size }, (_, i) => stamped(pool[(t * 97 + i) % pool.length], i));
    const parts = JSON.stringify({ records }).split(MARK);
    const marks = records.reduce((sum, r) => sum + 3 + (r.idempotencyKey ? 1 : 0) + (r.observed.task ? 1 : 0), 0);
    if (parts.length !== marks + 1) throw new Error('bench: the tag marker occurs in the record data');
    return parts;
  });
  let n = 0;
  return { size, next: (tag) => templates[n++ % count].join(tag) };
}
