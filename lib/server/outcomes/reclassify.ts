import 'server-only';
import { pool } from '../db/db';
import { auditAppendArgs } from '../audit/audit';
import { BEGIN, COMMIT, first, rows as run, affected } from '../db/kysely';
import { appendAuditEntry } from '../audit/sql';
import { resolveByLaterRecords } from './resolution-sql';
import {
  ensureRun,
  lockRun,
  saveProgress,
  selectBatch,
  selectStale,
  updateClassifications,
  type ReclassifiedRow,
} from './reclassify-sql';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { CLASSIFIER_VERSION, classifyRecord } from '@/lib/outcomes/classify';
import type { Observed, ToolAnnotations } from '@/lib/outcomes/schemas';
import { fail, ok, type Result } from '@/lib/result';

export type ReclassifyReport = {
  classifierVersion: number;
  examined: number;
  changed: number;
  /** "unknown/timeout → completed/ok": how many; "wording" when only the sentences changed. */
  changes: Record<string, number>;
  /** Whether this call resumed a run stopped before. */
  resumed: boolean;
  finished: boolean;
};

/**
 * Re-derives every stored classification from the stored observation with the current
 * classifier (docs/api.md `outcomes:reclassify`), a batch at a time in its own short transaction:
 * safe while the console runs (only the classification columns are written, rows by id, nothing
 * held between batches), resumable (the position is saved with each batch), audited once at the
 * end. A record whose delivery changed is resolved again (sql/resolution.ts).
 */
export async function reclassifyOutcomes(
  actor: Actor,
  options: { batchSize?: number; maxBatches?: number; onBatch?: (r: ReclassifyReport) => void } = {},
): Promise<Result<ReclassifyReport>> {
  if (!authorize(actor, 'outcomes.reclassify')) return fail('forbidden');
  const size = Math.max(1, options.batchSize ?? 2_000);
  const version = CLASSIFIER_VERSION;
  await run(ensureRun(version));
  let resumed: boolean | undefined;
  for (let batch = 0; ; batch++) {
    const conn = await pool().connect();
    let broken: Error | undefined;
    try {
      await run(BEGIN, conn);
      const state = (await first(lockRun(version), conn))!;
      const report: ReclassifyReport = {
        classifierVersion: version,
        examined: state.examined,
        changed: state.changed,
        changes: { ...(state.changes as Record<string, number>) },
        resumed: resumed ?? (state.last_id !== null && state.finished_at === null),
        finished: state.finished_at !== null,
      };
      resumed = report.resumed;
      if (report.finished || (options.maxBatches !== undefined && batch >= options.maxBatches)) {
        await run(COMMIT, conn);
        return ok(report);
      }
      const records = await run(selectBatch(state.last_id, size), conn);
      const updates: ReclassifiedRow[] = [];
      const deliveryChanged: string[] = [];
      for (const r of records) {
        const c = classifyRecord(
          {
            observed: r.observed as Observed,
            tool: { name: r.tool_name, annotations: (r.tool_annotations as ToolAnnotations | null) ?? undefined },
          },
          r.annotations_trusted,
        );
        const same =
          c.boundary === r.boundary &&
          c.delivery === r.delivery &&
          c.category === r.category &&
          c.retry === r.retry &&
          c.readOnly === r.read_only &&
          c.whatHappened === r.what_happened &&
          c.nextStep === r.next_step;
        if (same && r.classifier_version === version) continue;
        updates.push({
          id: r.id,
          boundary: c.boundary,
          delivery: c.delivery,
          category: c.category,
          retry: c.retry,
          read_only: c.readOnly,
          what_happened: c.whatHappened,
          next_step: c.nextStep,
          classifier_version: version,
        });
        if (same) continue;
        report.changed++;
        const change =
          c.delivery === r.delivery && c.category === r.category && c.boundary === r.boundary
            ? c.retry === r.retry && c.readOnly === r.read_only
              ? 'wording'
              : `${r.delivery}/${r.category}: retry or read-only`
            : `${r.delivery}/${r.category} → ${c.delivery}/${c.category}`;
        report.changes[change] = (report.changes[change] ?? 0) + 1;
        if (c.delivery !== r.delivery) deliveryChanged.push(r.id);
      }
      if (updates.length) await affected(updateClassifications(updates), conn);
      if (deliveryChanged.length) await run(resolveByLaterRecords(deliveryChanged), conn);
      report.examined += records.length;
      report.finished = records.length < size;
      await run(
        saveProgress(version, {
          lastId: records.at(-1)?.id ?? state.last_id,
          examined: report.examined,
          changed: report.changed,
          changes: report.changes,
          finished: report.finished,
        }),
        conn,
      );
      if (report.finished) {
        const input = {
          actor: auditName(actor),
          action: 'outcomes.reclassify',
          targetType: 'classifier',
          targetId: String(version),
          data: { examined: report.examined, changed: report.changed, changes: report.changes },
        };
        const { data, canonical } = auditAppendArgs(input);
        await affected(appendAuditEntry(input, data, canonical), conn);
      }
      await run(COMMIT, conn);
      options.onBatch?.(report);
      if (report.finished) return ok(report);
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      conn.release(broken);
    }
  }
}

/** Whether stored records were classified by an older classifier (the first start after an upgrade). */
export async function needsReclassify(): Promise<boolean> {
  return (await run(selectStale(CLASSIFIER_VERSION))).length > 0;
}

/** "unknown/timeout → completed/ok: 12" lines, most first. */
export function describeReclassify(r: ReclassifyReport): string {
  const lines = Object.entries(r.changes)
    .sort((a, b) => b[1] - a[1])
    .map(([change, n]) => `  ${change}: ${n}`);
  return [
    `Reclassified with classifier version ${r.classifierVersion}: ${r.examined} records examined, ${r.changed} changed${r.resumed ? ' (resumed)' : ''}.`,
    ...lines,
  ].join('\n');
}
