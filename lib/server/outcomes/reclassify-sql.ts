import 'server-only';
import type { Selectable } from 'kysely';
import { kysely, sql, type DB } from '../db/kysely';

// `outcomes:reclassify` (lib/server/outcomes/reclassify.ts): a keyset walk over outcome_records by id,
// its position kept in reclassify_runs so a stopped run resumes where it was.

type Rec = Selectable<DB['outcome_records']>;

/** The run of this classifier version, created if absent, locked for this batch (one runner at a time). */
export const ensureRun = (version: number) => sql`
  INSERT INTO reclassify_runs (classifier_version) VALUES (${version}) ON CONFLICT (classifier_version) DO NOTHING`;

export const lockRun = (version: number) =>
  kysely
    .selectFrom('reclassify_runs')
    .select(['id', 'last_id', 'examined', 'changed', 'changes', 'finished_at'])
    .where('classifier_version', '=', version)
    .forUpdate();

/** The next batch after `after` (null: from the start): what the classifier reads, and what it wrote. */
export const selectBatch = (after: string | null, size: number) =>
  kysely
    .selectFrom('outcome_records')
    .select([
      'id',
      'observed',
      'tool_name',
      'tool_annotations',
      'annotations_trusted',
      'boundary',
      'delivery',
      'category',
      'retry',
      'read_only',
      'what_happened',
      'next_step',
      'classifier_version',
    ])
    .$if(after !== null, (q) => q.where('id', '>', after!))
    .orderBy('id')
    .limit(size);

export type ReclassifiedRow = Pick<
  Rec,
  | 'id'
  | 'boundary'
  | 'delivery'
  | 'category'
  | 'retry'
  | 'read_only'
  | 'what_happened'
  | 'next_step'
  | 'classifier_version'
>;

/** Writes the classification fields, and only those, of these records. */
export const updateClassifications = (rows: ReclassifiedRow[]) => sql`
  UPDATE outcome_records o
  SET boundary = r.boundary, delivery = r.delivery, category = r.category, retry = r.retry,
      read_only = r.read_only, what_happened = r.what_happened, next_step = r.next_step,
      classifier_version = r.classifier_version
  FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(
    id uuid, boundary outcome_boundary, delivery outcome_delivery, category outcome_category,
    retry outcome_retry, read_only bool, what_happened text, next_step text, classifier_version int4)
  WHERE o.id = r.id`;

export const saveProgress = (
  version: number,
  p: { lastId: string | null; examined: number; changed: number; changes: Record<string, number>; finished: boolean },
) => sql`
  UPDATE reclassify_runs
  SET last_id = ${p.lastId}::uuid, examined = ${p.examined}, changed = ${p.changed},
      changes = ${JSON.stringify(p.changes)}::jsonb,
      finished_at = CASE WHEN ${p.finished} THEN now() ELSE NULL END
  WHERE classifier_version = ${version}`;

/** Whether any record was classified by an older classifier than this one. */
export const selectStale = (version: number) =>
  kysely.selectFrom('outcome_records').select('id').where('classifier_version', '<', version).limit(1);
