// One batch of outcome records posted to Countersign (`POST /api/v1/outcomes`) by the reporter
// (reporter.ts), and what the answer means for the batch: accepted, too large, partly refused,
// worth retrying, or refused for good.
import type { Outcome } from '../outcomes/schemas';
import { callApi, isTransient, problemCode, type ApiResponse, type CountersignEndpoint } from './countersign-http';

export type BatchAnswer =
  /** Stored (new or duplicate): the stored id of each record the answer names, by eventId. */
  | { kind: 'accepted'; ids: { eventId: string; id: string }[]; duplicates: number }
  /** 413 for more than one record: a smaller batch may pass. */
  | { kind: 'too_large' }
  /** 422 naming some of the records (`records.N.…`), by their index in the batch: the others may pass. */
  | { kind: 'partly_refused'; status: number; code: string | null; refused: Set<number> }
  /** A network failure, a retryable status, or 401/403 (which an operator can fix by restoring the key). */
  | { kind: 'retry'; status: number | null; code: string | null; retryAfterMs: number | null }
  /** Any other answer: resending cannot help. */
  | { kind: 'refused'; status: number; code: string | null };

export async function postBatch(endpoint: CountersignEndpoint, batch: Outcome[]): Promise<BatchAnswer> {
  let res: ApiResponse;
  try {
    res = await callApi(endpoint, 'POST', '/api/v1/outcomes', { body: { records: batch } });
  } catch (error) {
    res = { kind: 'network_error', error };
  }
  if (res.kind === 'response' && res.status >= 200 && res.status < 300) {
    const body = res.body as {
      accepted?: number;
      duplicates?: number;
      records?: { eventId?: unknown; id?: unknown }[];
    } | null;
    const ids: { eventId: string; id: string }[] = [];
    for (const r of Array.isArray(body?.records) ? body.records : [])
      if (typeof r?.eventId === 'string' && typeof r.id === 'string') ids.push({ eventId: r.eventId, id: r.id });
    return { kind: 'accepted', ids, duplicates: typeof body?.duplicates === 'number' ? body.duplicates : 0 };
  }
  const code = res.kind === 'response' ? problemCode(res.body) : null;
  if (res.kind === 'response' && res.status === 413 && batch.length > 1) return { kind: 'too_large' };
  if (res.kind === 'response' && res.status === 422) {
    const refused = refusedIndexes(res.body, batch.length);
    if (refused.size > 0 && refused.size < batch.length)
      return { kind: 'partly_refused', status: res.status, code, refused };
  }
  if (res.kind === 'network_error' || isTransient(res) || res.status === 401 || res.status === 403) {
    return {
      kind: 'retry',
      status: res.kind === 'response' ? res.status : null,
      code,
      retryAfterMs: res.kind === 'response' ? res.retryAfterMs : null,
    };
  }
  return { kind: 'refused', status: res.status, code };
}

// `errors: [{ path: "records.3.summary" }]` → {3}
function refusedIndexes(body: unknown, size: number): Set<number> {
  const errors = body && typeof body === 'object' ? (body as { errors?: unknown }).errors : null;
  const out = new Set<number>();
  if (!Array.isArray(errors)) return out;
  for (const e of errors) {
    const m = /^records\.(\d+)(\.|$)/.exec(typeof e?.path === 'string' ? e.path : '');
    if (m && Number(m[1]) < size) out.add(Number(m[1]));
  }
  return out;
}
