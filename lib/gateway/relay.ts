// One MCP session through the gateway: two SDK transports, messages relayed unchanged in both
// directions, ids untouched (each direction keeps its own), except:
// - `tools/call` from the client: enforced and observed (call.ts);
// - the server's progress on a call the gateway held for its grant: raised above the gateway's
//   own progress on the same token (call.ts, approval-gate.ts progressShift);
// - `tools/list` answers: remembered as the tool catalog (annotations, output schemas) and shown
//   without the tools policy hides (blocked, or held: their definition changed since accepted);
// - requests of the gateway's own (a `tools/list` when a call comes before any list) carry ids
//   of their own namespace and never reach the client.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, type ListToolsResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import type { GatewayContext } from './context';
import { ToolCalls } from './call';
import type { Exchange, FromClient } from './exchange';
import type { FromServer, UpstreamSendOptions } from './http-upstream';
import { isErrorResponse, isNotification, isRequest, isResult } from './messages';

type Id = string | number;
const OWN_PREFIX = `countersign-gateway-${randomUUID().slice(0, 8)}-`;

export class Relay {
  readonly catalog = new Map<string, Tool>();
  catalogLoaded = false;
  /** The catalog's tools as one array, made again only when the catalog changed (the policy cache's key). */
  private catalogList: Tool[] | null = null;
  private listing = new Map<Id, { first: boolean }>();
  private own = new Map<Id, (message: JSONRPCMessage) => void>();
  private ownSeq = 0;
  private initializeId: Id | null = null;
  /** The hidden set (policy.ts `hiddenKey`) the client's list was last shown without. */
  private shownHidden = '';
  private closed = false;
  readonly calls: ToolCalls;
  /** The request reference of calls that name none: one per MCP session. */
  readonly sessionRef = `gw-${randomUUID()}`;
  onclose?: () => void;

  constructor(
    readonly down: Transport,
    readonly up: Transport,
    readonly ctx: GatewayContext,
  ) {
    this.calls = new ToolCalls(this);
  }

  async start(): Promise<void> {
    this.down.onmessage = (m, extra?: FromClient) => this.fromClient(m, extra?.exchange);
    this.up.onmessage = (m, extra?: FromServer) => this.fromServer(m, extra?.relatedRequestId);
    this.down.onclose = () => void this.close('client');
    this.up.onclose = () => void this.close('server');
    this.down.onerror = (e) => this.ctx.log(`client transport: ${e.message}`);
    this.up.onerror = (e) => this.ctx.log(`server transport: ${e.message}`);
    await this.up.start();
    await this.down.start();
  }

  async close(side: 'client' | 'server' | 'gateway' = 'gateway'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.calls.connectionClosed(side);
    await Promise.allSettled([this.up.close(), this.down.close()]);
    this.onclose?.();
  }

  // ── client → server ────────────────────────────────────────────────────────────────────────

  /** `exchange`: the HTTP request it came in (HTTP mode), whose refusal and Authorization it carries. */
  private fromClient(message: JSONRPCMessage, exchange?: Exchange): void {
    if (isRequest(message)) {
      if (message.method === 'tools/call') return void this.calls.handle(message, exchange);
      if (message.method === 'tasks/get' || message.method === 'tasks/result' || message.method === 'tasks/cancel')
        this.calls.taskRequest(message);
      if (message.method === 'tools/list') this.listing.set(message.id, { first: !message.params?.cursor });
      if (message.method === 'initialize') this.initializeId = message.id;
    } else if (isNotification(message) && message.method === 'notifications/cancelled') {
      if (this.calls.cancelled(message.params?.requestId as Id | undefined)) return;
    }
    void this.toServer(message, { exchange });
  }

  /** Sends to the server; a request that cannot be sent is answered with a JSON-RPC error. */
  async toServer(message: JSONRPCMessage, options?: UpstreamSendOptions): Promise<unknown> {
    try {
      await this.up.send(message, options);
      return null;
    } catch (error) {
      if (isRequest(message) && !this.own.has(message.id)) {
        this.listing.delete(message.id);
        this.ctx.log(`could not reach the server for ${message.method}: ${describe(error)}`);
        if (message.method !== 'tools/call') void this.toClient(upstreamFailure(message.id, error));
      }
      return error ?? new Error('send failed');
    }
  }

  // ── server → client ────────────────────────────────────────────────────────────────────────

  /**
   * `related`: the client's request whose answer (the server's SSE stream for that POST) carried
   * this message. The server sends there what belongs to that request (progress, logging, its own
   * requests: elicitation, sampling); it goes on with that request's answer to the client too, as
   * the Streamable HTTP transport asks ("These messages SHOULD relate to the originating client
   * request"), not on the client's separate GET stream, which may not be open yet.
   */
  private fromServer(message: JSONRPCMessage, related?: Id): void {
    if (isResult(message) || isErrorResponse(message)) {
      const id = message.id as Id;
      const own = this.own.get(id);
      if (own) {
        this.own.delete(id);
        return own(message);
      }
      if (this.calls.answered(message)) return;
      const list = this.listing.get(id);
      if (list) {
        this.listing.delete(id);
        if (isResult(message)) return void this.showList(message.result as ListToolsResult, list.first, message);
      }
      if (id === this.initializeId && isResult(message)) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === 'string')
          (this.up as { setProtocolVersion?: (v: string) => void }).setProtocolVersion?.(version);
      }
    } else if (isNotification(message) && message.method === 'notifications/tools/list_changed') {
      this.catalogLoaded = false;
    } else if (isNotification(message) && message.method === 'notifications/progress') {
      message = this.calls.progressed(message);
    }
    // What relates to a request of the gateway's own has no answer to the client to go with.
    void this.toClient(
      message,
      related === undefined || this.own.has(related) ? undefined : { relatedRequestId: related },
    );
  }

  async toClient(message: JSONRPCMessage, options?: { relatedRequestId?: Id }): Promise<void> {
    try {
      await this.down.send(message, options);
    } catch (error) {
      this.ctx.log(`could not reach the client: ${describe(error)}`);
    }
  }

  private async showList(result: ListToolsResult, first: boolean, message: JSONRPCMessage & { id: Id }) {
    if (first) this.catalog.clear();
    for (const tool of result.tools ?? []) this.catalog.set(tool.name, tool);
    this.catalogList = null;
    if (!result.nextCursor) this.catalogLoaded = true;
    const policy = await this.ctx.policy.get(this.toolList());
    const hidden = new Set(policy?.hidden ?? []);
    this.shownHidden = policy?.hiddenKey ?? '';
    const shown = hidden.size ? { ...result, tools: result.tools.filter((t) => !hidden.has(t.name)) } : result;
    await this.toClient({ ...message, result: shown } as JSONRPCMessage);
  }

  /** Tells the client its list changed when the set of hidden tools did (after a policy refresh). */
  noticeHidden(now: string): void {
    if (!this.catalogLoaded || now === this.shownHidden) return;
    this.shownHidden = now;
    void this.toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  toolList(): Tool[] {
    return (this.catalogList ??= [...this.catalog.values()]);
  }

  /** The catalog, listed by the gateway itself when no list has passed yet (or it changed). */
  async tools(): Promise<Map<string, Tool> | null> {
    if (this.catalogLoaded) return this.catalog;
    const tools = new Map<string, Tool>();
    let cursor: string | undefined;
    do {
      const answer = await this.ownRequest('tools/list', cursor ? { cursor } : {});
      if (!answer || !isResult(answer)) return this.catalog.size ? this.catalog : null;
      const page = answer.result as ListToolsResult;
      for (const tool of page.tools ?? []) tools.set(tool.name, tool);
      cursor = page.nextCursor;
    } while (cursor);
    this.catalog.clear();
    for (const [k, v] of tools) this.catalog.set(k, v);
    this.catalogList = null;
    this.catalogLoaded = true;
    return this.catalog;
  }

  private ownRequest(method: string, params: Record<string, unknown>, timeoutMs = 10_000) {
    const id = `${OWN_PREFIX}${++this.ownSeq}`;
    return new Promise<JSONRPCMessage | null>((resolve) => {
      const timer = setTimeout(() => {
        this.own.delete(id);
        resolve(null);
      }, timeoutMs);
      this.own.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      // Not part of a client's HTTP exchange: its answer is not the answer to the client's request.
      void this.toServer({ jsonrpc: '2.0', id, method, params }).then((error) => {
        if (error && this.own.delete(id)) {
          clearTimeout(timer);
          resolve(null);
        }
      });
    });
  }
}

export function upstreamFailure(id: Id, error: unknown): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: `The gateway could not reach the MCP server (${describe(error)}).` },
  };
}

// Error names and codes only: messages of upstream errors may quote what the server sent.
export function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { name?: unknown; code?: unknown; cause?: { code?: unknown } };
    const code = e.code ?? e.cause?.code;
    return [typeof e.name === 'string' ? e.name : 'Error', code != null ? String(code) : null]
      .filter(Boolean)
      .join(' ');
  }
  return 'Error';
}
