// What kind of JSON-RPC message one is, by its members: the SDK's own guards (`isJSONRPCRequest`
// and the like) run a strict zod parse of the whole message each time, several per message on
// the relay's path. Messages from the client were parsed once by its transport already; those
// from the server go on to the client's SDK, which parses them itself.
import type {
  JSONRPCErrorResponse,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';

const has = (m: object, key: string) => Object.prototype.hasOwnProperty.call(m, key);
const isId = (v: unknown) => typeof v === 'string' || typeof v === 'number';

export const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest =>
  typeof (m as { method?: unknown }).method === 'string' && isId((m as { id?: unknown }).id);

export const isNotification = (m: JSONRPCMessage): m is JSONRPCNotification =>
  typeof (m as { method?: unknown }).method === 'string' && !has(m, 'id');

export const isResult = (m: JSONRPCMessage): m is JSONRPCResultResponse =>
  has(m, 'result') && !has(m, 'method') && isId((m as { id?: unknown }).id);

export const isErrorResponse = (m: JSONRPCMessage): m is JSONRPCErrorResponse =>
  has(m, 'error') && !has(m, 'method') && !has(m, 'result');

/** Whether a value parsed from the server has the shape of a JSON-RPC message: a request or notification, or a response. */
export function isMessage(m: unknown): m is Record<string, unknown> {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const o = m as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') return false;
  if (typeof o.method === 'string') return true;
  return (typeof o.id === 'string' || typeof o.id === 'number') && ('result' in o || 'error' in o);
}

export const isInitialized = (m: JSONRPCMessage) =>
  !Array.isArray(m) && 'method' in m && m.method === 'notifications/initialized' && !('id' in m);
