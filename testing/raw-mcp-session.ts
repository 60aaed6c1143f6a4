// Raw MCP requests over Streamable HTTP for the gateway's HTTP tests (sessions of 2025, and 2026-07-28 calls):
// requests sent as given, headers included, and what came back, messages parsed from a JSON body or
// the SSE frames.
import { expect } from 'vitest';

export const ACCEPT = 'application/json, text/event-stream';

export interface Answer {
  status: number;
  type: string | null;
  headers: Headers;
  /** The raw body (SSE frames as sent). */
  text: string;
  /** The JSON-RPC messages in it (one JSON body, or each SSE `message` event), ids of records blanked. */
  messages: unknown[];
}

/** The messages of a body: a JSON body, or the `data` of each SSE event. */
function messagesOf(type: string | null, text: string): unknown[] {
  if (type?.startsWith('application/json')) return [JSON.parse(text)];
  if (!type?.startsWith('text/event-stream')) return [];
  return text
    .split('\n\n')
    .map((frame) =>
      frame
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6),
    )
    .filter((d): d is string => !!d)
    .map((d) => JSON.parse(d));
}

// The record's event id and the session's request reference differ between the two gateways by
// design: blanked for the comparison.
const blank = (m: unknown) =>
  JSON.parse(
    JSON.stringify(m)
      .replace(/"countersign\/eventId":"evt_[^"]+"/g, '"countersign/eventId":"evt"')
      .replace(/"countersign\/requestRef":"gw-[^"]+"/g, '"countersign/requestRef":"gw-session"'),
  );

/** A raw MCP session over HTTP: initialize, initialized, then any POST, headers as given. */
export async function rawSession(url: string, token: string) {
  const post = async (body: string, headers: Record<string, string | null> = {}): Promise<Answer> => {
    const h: Record<string, string> = {};
    const all: Record<string, string | null> = {
      accept: ACCEPT,
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2025-11-25',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      ...headers,
    };
    for (const [k, v] of Object.entries(all)) if (v !== null) h[k] = v;
    const res = await fetch(url, { method: 'POST', headers: h, body });
    const text = await res.text();
    const type = res.headers.get('content-type');
    return { status: res.status, type, headers: res.headers, text, messages: messagesOf(type, text).map(blank) };
  };
  let sessionId: string | null = null;
  const init = await post(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  );
  sessionId = init.headers.get('mcp-session-id');
  expect(sessionId).toBeTruthy();
  expect((await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(202);
  return { post, sessionId: sessionId! };
}

/** A JSON-RPC request's text. */
export const rpc = (id: unknown, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** A 2026-07-28 client's `_meta` envelope, as the raw tests send it. */
export const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'raw-client', version: '1.0.0' },
};

/**
 * A 2026-07-28 `tools/call` as a client sends it (no session, the standard headers, the envelope in
 * `params._meta` as given): the whole text of its answer and its final message (a JSON body, or
 * the last SSE frame's data).
 */
export async function postModernCall(url: string, id: number, params: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
  });
  const text = await response.text();
  const last = text.startsWith('{')
    ? text
    : text
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .at(-1)!
        .slice('data: '.length);
  return { text, message: JSON.parse(last) as { result?: unknown; error?: unknown } };
}
