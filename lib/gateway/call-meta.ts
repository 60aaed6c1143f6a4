// The `_meta` of a call through the gateway: the countersign/* keys a client may set on its
// tools/call (the request reference, idempotency key and summary the record carries), and the
// reference and event id the gateway adds to the answer's, so the client can find the record.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
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

/** The answer with the record's reference and event id added to its result's `_meta`; one without a result object as is. */
export function withMeta(message: JSONRPCMessage, requestRef: string, eventId: string): JSONRPCMessage {
  if (!('result' in message) || !isRecord(message.result)) return message;
  const result = message.result as { _meta?: Record<string, unknown> };
  return {
    ...message,
    result: {
      ...result,
      _meta: { ...result._meta, 'countersign/requestRef': requestRef, 'countersign/eventId': eventId },
    },
  } as JSONRPCMessage;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
