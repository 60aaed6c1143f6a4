// `withCountersign(client, options)`: every tool call observed, classified with THE shared
// classifier (lib/outcomes/classify.ts) and reported; every call of a tool not trusted as
// read-only made only with a grant redeemed right before it, its approval request carrying the
// arguments the tool is then called with. Records carry only their digest.
import type { CallToolResult, Client, Tool, VersionNegotiationMode } from '@modelcontextprotocol/client';
import { classifyRecord } from '../outcomes/classify';
import type { Classification, Observed, Outcome } from '../outcomes/schemas';
import { approvalKey, obtainGrant, type ApprovalWaitOptions, type GrantOutcome } from './approvals';
import { callApi, type CountersignEndpoint } from './countersign-http';
import { guardOf, type GuardRefusal } from './guard';
import { DEFAULT_BUDGETS, type GuardBudgets } from '../guards/budgets';
import { guardText } from '../guards/decide';
import { ReadGuard } from '../guards/read-guard';
import { argsDigest } from './digest';
import type { ToolCatalog } from './catalog';
import { observeToolCall, prepareSession, type Observation, type SessionReady } from './observe';
import { annotationsOf, callRecord, checkCallOptions } from './record';
import { OutcomeReporter, type ReporterOptions } from './reporter';

export { annotationsOf } from './record';

export interface CountersignOptions extends CountersignEndpoint {
  /** The name Countersign knows this MCP server by, e.g. `billing-mcp`. */
  server: string;
  /**
   * Whether this agent trusts the server's tool annotations. Only then does `readOnlyHint` let a
   * call go without a grant, and only then is a failed read classified as read-only.
   */
  trustedServer: boolean;
  organization: string;
  /** On whose delegated authority the agent acts. */
  principal: string;
  agent?: string;
  /**
   * Connects the client when it is not connected (first call, or after the connection closed).
   * Create a fresh transport inside: a transport cannot be started twice.
   */
  connect?: () => Promise<void>;
  /** Default: a reporter on the same URL and key. Share one between wrappers if you like. */
  reporter?: OutcomeReporter;
  reporterOptions?: Omit<ReporterOptions, keyof CountersignEndpoint>;
  /**
   * The MCP era(s) to speak, when the client is not connected yet (`connect` then connects it):
   * `auto` (probe with `server/discover`, fall back to the 2025 `initialize`), `legacy` (2025
   * only) or `{ pin: '2026-07-28' }`. Default: what the client was built with, else `auto`. A
   * client connected before it is wrapped keeps the era it negotiated.
   */
  versionNegotiation?: VersionNegotiationMode;
  /** Per tool call (the SDK's default is 60 s). */
  timeoutMs?: number;
  lostConnectionGraceMs?: number;
  approval?: ApprovalWaitOptions;
  /**
   * The budgets this wrapper's trusted reads are held to (the defaults of docs/design.md's guard
   * table unless given; writes are held to the console's, set by an admin).
   */
  guardBudgets?: GuardBudgets;
}

export interface CallOptions {
  /** The user-level task this call serves: what support staff search by. */
  requestRef: string;
  /** The operation's own key, reused on every retry of the same intended mutation. */
  idempotencyKey?: string;
  /** A short human summary, e.g. "Refund 40.00 EUR on order 4411" (masked by the server). */
  summary: string;
  resource?: { type: string; id: string };
  /** 1 for the first try; the retry helper counts up. */
  attempt?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * Run the call as an MCP task where the tool allows it (tools requiring tasks always run as
   * one). Each status seen is reported as its own record with the task's id.
   */
  task?: boolean | { ttlMs?: number };
}

export interface GuardedCallResult {
  /** The tool's result, when it returned one worth reading (see Observation.result). */
  result?: CallToolResult;
  classification: Classification;
  /** What was reported (no arguments, no result). */
  record: Outcome;
  approval?: { id: string | null; grantId?: string; blockedBecause?: string };
  /** The guards refused the call before it was staged (docs/design.md "Guards at the point of execution"). */
  refused?: Omit<GuardRefusal, 'decision' | 'record'>;
  /** The SDK's error, if any, for logs. */
  error?: unknown;
}

export class CountersignClient {
  readonly reporter: OutcomeReporter;
  /** The guards on trusted reads, counted on this wrapper's own reads (lib/guards/read-guard.ts). */
  private readonly reads = new ReadGuard();
  private catalog: ToolCatalog | null = null;
  private preparing: Promise<SessionReady> | null = null;

  constructor(
    readonly client: Client,
    private readonly options: CountersignOptions,
  ) {
    this.reporter =
      options.reporter ??
      new OutcomeReporter({
        ...options.reporterOptions,
        url: options.url,
        apiKey: options.apiKey,
        fetch: options.fetch,
      });
    negotiate(client, options.versionNegotiation);
  }

  /** Forgets the tool catalog (e.g. on `notifications/tools/list_changed`); the next call lists again. */
  refreshTools(): void {
    this.catalog = null;
  }

  /**
   * Posts a state check's verdict on an uncertain call (docs/api.md `POST /api/v1/outcomes/{id}/state-check`)
   * once its record is stored: the console then shows it resolved. Answers the HTTP status (null:
   * the record's id is not known, or the network failed); a 409 means something settled it first.
   */
  async reportStateCheck(
    record: Outcome,
    verdict: 'happened' | 'did_not_happen',
    note: string,
  ): Promise<number | null> {
    await this.reporter.flush();
    const id = this.reporter.idOf(record.eventId);
    if (!id) return null;
    const res = await callApi(this.options, 'POST', `/api/v1/outcomes/${encodeURIComponent(id)}/state-check`, {
      body: { verdict, note },
    });
    return res.kind === 'response' ? res.status : null;
  }

  async callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    call: CallOptions,
  ): Promise<GuardedCallResult> {
    const args = params.arguments ?? {};
    const digest = argsDigest(args);
    const attempt = call.attempt ?? 1;
    // Caller mistakes (an empty requestRef, a 600-character summary) surface before anything runs.
    checkCallOptions(
      callRecord(
        this.options,
        params.name,
        null,
        digest,
        call,
        attempt,
        { sent: false, clientBlock: 'approval_required' },
        null,
        undefined,
      ),
    );

    const session = await this.session(call);
    if (!session.ok) return this.finish(params.name, undefined, digest, call, attempt, session.observation);
    this.catalog = session.catalog;
    const tool = session.catalog.tools.get(params.name);

    let grant: Extract<GrantOutcome, { ok: true }> | null = null;
    if (this.trustedReadOnly(tool)) {
      // The guards' rows for reads, decided here on this wrapper's own reads (no round trip).
      const d = this.reads.decide(
        {
          requestRef: call.requestRef,
          principal: this.options.principal,
          server: this.options.server,
          toolName: params.name,
          digest: () => digest,
        },
        this.options.guardBudgets ?? DEFAULT_BUDGETS,
      );
      if (d.decision === 'refuse') {
        // The read guards know records by event id: the console's id once it has answered for it.
        const recordId = d.recordId === undefined ? undefined : this.reporter.idOf(d.recordId);
        const refused = this.finish(
          params.name,
          tool,
          digest,
          call,
          attempt,
          { observed: { sent: false, clientBlock: d.category }, startedAt: new Date(), durationMs: 0 },
          undefined,
          recordId,
        );
        const { category, retry, retryAfterMs } = d;
        const text = guardText({ ...d, recordId }, params.name);
        return {
          ...refused,
          refused: {
            category,
            retry,
            text,
            ...(recordId ? { recordId } : {}),
            ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          },
        };
      }
    } else {
      // The refusal's record, if the guards refuse: Countersign stores it under this event id.
      const question = callRecord(
        this.options,
        params.name,
        tool,
        digest,
        call,
        attempt,
        { sent: false },
        null,
        undefined,
      );
      const outcome = await obtainGrant(
        this.options,
        {
          body: {
            requestRef: call.requestRef,
            organization: this.options.organization,
            principal: this.options.principal,
            agent: this.options.agent,
            server: this.options.server,
            tool: { name: params.name, annotations: annotationsOf(tool) },
            argsDigest: digest,
            // The object digested above and called with below: what the reviewer sees is what runs.
            arguments: args,
            summary: call.summary,
            resource: call.resource,
            // The guards, asked in the same request (lib/mcp/guard.ts).
            guard: guardOf(
              this.reporter,
              { ...question, argsDigest: digest, idempotencyKey: call.idempotencyKey },
              question.eventId,
            ),
          },
          idempotencyKey: approvalKey(this.options.server, params.name, call, digest, attempt),
        },
        this.options.approval,
        call.signal,
      );
      if (!outcome.ok && outcome.guard) return this.refusedByGuards(question, outcome.guard);
      if (!outcome.ok) {
        const observed: Observed = outcome.cancelled
          ? { sent: false, clientError: 'cancelled' }
          : { sent: false, clientBlock: outcome.block };
        const blocked = this.finish(params.name, tool, digest, call, attempt, {
          observed,
          startedAt: new Date(),
          durationMs: 0,
        });
        return { ...blocked, approval: { id: outcome.approvalId, blockedBecause: outcome.reason } };
      }
      grant = outcome;
    }

    const observation = await observeToolCall(
      this.client,
      { name: params.name, arguments: args },
      {
        catalog: session.catalog,
        timeoutMs: call.timeoutMs ?? this.options.timeoutMs,
        signal: call.signal,
        lostConnectionGraceMs: this.options.lostConnectionGraceMs,
        task: {
          prefer: call.task != null && call.task !== false,
          ttlMs: typeof call.task === 'object' ? call.task.ttlMs : undefined,
          // The creation and each status change: a record each, linked by the task's id.
          onStatus: (seen) => void this.finish(params.name, tool, digest, call, attempt, seen, grant?.grantId),
        },
      },
    );
    const done = this.finish(params.name, tool, digest, call, attempt, observation, grant?.grantId);
    return grant ? { ...done, approval: { id: grant.approvalId, grantId: grant.grantId } } : done;
  }

  /**
   * A write the guards refused (lib/mcp/guard.ts): Countersign stored the refusal under the
   * record returned here, which is not reported again.
   */
  private refusedByGuards(question: Outcome, answer: GuardRefusal): GuardedCallResult {
    const record: Outcome = { ...question, observed: { sent: false, clientBlock: answer.category } };
    const { category, retry, recordId, retryAfterMs, text } = answer;
    return {
      classification: classifyRecord(record, this.options.trustedServer),
      record,
      refused: {
        category,
        retry,
        text,
        ...(recordId ? { recordId } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      },
    };
  }

  /** Sends buffered records now. */
  flush() {
    return this.reporter.flush();
  }

  /** Flushes with retries until the deadline and stops the reporter. The MCP client stays open. */
  close(timeoutMs?: number) {
    return this.reporter.close(timeoutMs);
  }

  // One connection attempt and one tools/list at a time: concurrent first calls share them.
  private session(call: CallOptions): Promise<SessionReady> {
    if (!this.client.transport) this.catalog = null;
    if (this.catalog) return Promise.resolve({ ok: true, catalog: this.catalog });
    this.preparing ??= prepareSession(this.client, {
      connect: this.options.connect,
      timeoutMs: call.timeoutMs ?? this.options.timeoutMs,
    }).finally(() => {
      this.preparing = null;
    });
    return this.preparing;
  }

  private trustedReadOnly(tool: Tool | undefined): boolean {
    return this.options.trustedServer && tool?.annotations?.readOnlyHint === true;
  }

  private finish(
    name: string,
    tool: Tool | undefined,
    digest: string,
    call: CallOptions,
    attempt: number,
    observation: Pick<Observation, 'observed' | 'startedAt' | 'durationMs'> & Partial<Observation>,
    grantId?: string,
    earlierRecordId?: string,
  ): GuardedCallResult {
    const made = callRecord(
      this.options,
      name,
      tool,
      digest,
      call,
      attempt,
      observation.observed,
      observation,
      grantId,
    );
    // A guard's refusal names the earlier record it points to, when Countersign's id for it is known.
    const record: Outcome = earlierRecordId ? { ...made, earlierRecordId } : made;
    const classification = classifyRecord(record, this.options.trustedServer);
    this.reporter.enqueue(record);
    if (this.trustedReadOnly(tool)) this.reads.note(record);
    return {
      ...(observation.result ? { result: observation.result } : {}),
      classification,
      record,
      ...(observation.error !== undefined ? { error: observation.error } : {}),
    };
  }
}

// SDK v2's Client speaks only 2025 unless told otherwise; the wrapper's default is both eras. A
// choice made on the client itself (its constructor's `versionNegotiation`) is kept.
function negotiate(client: Client, mode: VersionNegotiationMode | undefined): void {
  if (client.transport) return;
  const own = (client as unknown as { _versionNegotiation?: unknown })._versionNegotiation;
  if (mode === undefined && own !== undefined) return;
  client.setVersionNegotiation({ mode: mode ?? 'auto' });
}

export function withCountersign(client: Client, options: CountersignOptions): CountersignClient {
  return new CountersignClient(client, options);
}
