// The `_meta` of a call through the gateway: the countersign/* keys a client may set on its
// tools/call (the request reference, idempotency key and summary the record carries). The reference
// and event id the gateway adds to the answer's, so the client can find the record: modern-record.ts.
import type { CallMeta } from './record';

/** The call's countersign/* keys, trimmed and capped; absent, the session's reference and a summary naming the tool. */
export function callMeta(meta: Record<string, unknown> | undefined, sessionRef: string, name: string): CallMeta {
  const text = (key: string, max: number) => {
    const v = meta?.[key];
    return typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined;
  };
  return {
    requestRef: text('countersign/requestRef', 200) ?? sessionRef,
    idempotencyKey: text('countersign/idempotencyKey', 200),
    summary: text('countersign/summary', 500) ?? `${name} (through the Countersign gateway)`,
  };
}
