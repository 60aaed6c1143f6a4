import 'server-only';
import type { ApprovalView, DecisionView } from '@/lib/approvals/view';
import { maskText } from '@/lib/redaction/mask';
import { backoffDelay } from '@/lib/backoff';

// Chat notifications (Slack-compatible incoming webhooks) for new approval requests and for
// decisions, when COUNTERSIGN_WEBHOOK_URL is set. Delivery is in the background: the caller's
// request never waits for the receiver and never fails because of it. One in-process queue per
// server process, bounded (the oldest message is dropped when full), delivered in order, each
// message retried with exponential backoff within a bounded number of attempts and total time.
//
// What a message carries: who asks (agent) on whose behalf (principal, organization), tool,
// server, the masked summary, the resource, the approvals required, and a link to the console.
// Never the argument digest, the idempotency key, a grant id, or anything else a caller could
// use; never the webhook URL in a log line (a Slack webhook URL is itself a credential).

export type SlackText = { type: 'mrkdwn' | 'plain_text'; text: string };
export type SlackBlock =
  | { type: 'header'; text: SlackText }
  | { type: 'section'; text?: SlackText; fields?: SlackText[] }
  | { type: 'context'; elements: SlackText[] };
export type SlackMessage = { text: string; blocks?: SlackBlock[] };

export type DecisionNotice = Pick<DecisionView, 'reviewer' | 'decision'> & { reason?: string | null };

// ── Messages ────────────────────────────────────────────────────────────────────────────────

/** Where people open a request: COUNTERSIGN_PUBLIC_URL, else this machine's port. */
export function consoleBaseUrl(env: Record<string, string | undefined> = process.env): string {
  const base = env.COUNTERSIGN_PUBLIC_URL?.trim() || `http://localhost:${env.PORT?.trim() || '3000'}`;
  return base.replace(/\/+$/, '');
}

// Slack reads <…> as links and mentions (<!channel>) and & as an entity: callers' text must not.
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
// Free text (summary, reason, agent, resource) was masked when stored; masked again here, so text
// from anywhere else can never carry a secret out. Identifiers are kept as sent, as everywhere.
const clean = (s: string | null | undefined, max = 500) => escape(cut(maskText(s ?? '').text, max));
const id = (s: string) => escape(cut(s, 200));
const plain = (s: string) => cut(s, 150);
const approvals = (n: number) => (n === 0 ? 'no approval' : n === 1 ? '1 approval' : `${n} approvals`);

function facts(view: ApprovalView): SlackText[] {
  const fields: [string, string][] = [
    ['Asked by', view.agent ? clean(view.agent, 200) : 'an agent'],
    ['On behalf of', `${id(view.principal)} (${id(view.organization)})`],
    ['Tool', `\`${id(view.tool.name)}\``],
    ['Server', `${id(view.server)}${view.annotationsTrusted ? '' : ' (untrusted)'}`],
    ['Approvals required', String(view.requiredApprovals)],
    ['Expires', view.expiresAt.toISOString()],
    ['Request reference', id(view.requestRef)],
  ];
  if (view.resource) fields.push(['Resource', `${clean(view.resource.type, 100)} ${clean(view.resource.id, 200)}`]);
  return fields.map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}*\n${value}` }));
}

const linkOf = (view: ApprovalView, base: string) => `${base}/approvals/${encodeURIComponent(view.id)}`;

export function approvalRequestedMessage(view: ApprovalView, base = consoleBaseUrl()): SlackMessage {
  const link = linkOf(view, base);
  const who = view.agent ? clean(view.agent, 200) : 'An agent';
  const what = `${id(view.tool.name)} on ${id(view.server)}`;
  const headline = `${who} asks to run ${what} on behalf of ${id(view.principal)} (${id(view.organization)}): needs ${approvals(view.requiredApprovals)}.`;
  return {
    text: `Approval needed: ${headline} "${clean(view.summary)}" ${link}`,
    blocks: [
      {
        type: 'header',
        text: { type: 'plain_text', text: plain(`Approval needed: ${view.tool.name} on ${view.server}`) },
      },
      { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n>${clean(view.summary)}` } },
      { type: 'section', fields: facts(view) },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|Review in Countersign>` } },
    ],
  };
}

export function decisionMessage(view: ApprovalView, decision: DecisionNotice, base = consoleBaseUrl()): SlackMessage {
  const link = linkOf(view, base);
  const reviewer = id(decision.reviewer);
  const what = `${id(view.tool.name)} on ${id(view.server)} for ${id(view.principal)} (${id(view.organization)})`;
  const approved = view.decisions.filter((d) => d.decision === 'approve').length;
  const reason = decision.reason ? ` "${clean(decision.reason)}"` : '';
  const headline =
    decision.decision === 'deny'
      ? `Denied by ${reviewer}:${reason || ' no reason given'}. ${what} will not run.`
      : view.status === 'approved' || view.status === 'redeemed'
        ? `Approved (${approved} of ${view.requiredApprovals}), last by ${reviewer}${reason}: ${what} may run once; its authorization is issued.`
        : `${reviewer} approved${reason} (${approved} of ${view.requiredApprovals}): ${what} waits for ${approvals(Math.max(view.requiredApprovals - approved, 0))} more.`;
  const title = decision.decision === 'deny' ? 'Denied' : view.status === 'pending' ? 'Approval recorded' : 'Approved';
  return {
    text: `${headline} "${clean(view.summary)}" ${link}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: plain(`${title}: ${view.tool.name} on ${view.server}`) } },
      { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n>${clean(view.summary)}` } },
      { type: 'section', fields: facts(view) },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|Open in Countersign>` } },
    ],
  };
}

// ── Delivery ────────────────────────────────────────────────────────────────────────────────

export type NotifierOptions = {
  url: string;
  /** Attempts per message, the first included. */
  attempts?: number;
  /** Per attempt: a receiver that hangs is abandoned after this long. */
  timeoutMs?: number;
  /** Backoff before the second attempt; doubled each time, jittered, capped by maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Total time for one message, attempts and waits included. */
  deadlineMs?: number;
  /** Messages waiting (the one in flight not counted); when full the oldest is dropped. */
  queueSize?: number;
  log?: Pick<Console, 'warn' | 'error'>;
  random?: () => number;
};

export type NotifierStats = { queued: number; delivered: number; failed: number; dropped: number };

export type Notifier = {
  /** Queues a message and returns at once; never throws. */
  send(message: SlackMessage, label: string): void;
  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void>;
  stats(): NotifierStats;
};

type Attempt = { ok: true } | { ok: false; retry: boolean; reason: string; retryAfterMs?: number };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

export function createNotifier(options: NotifierOptions): Notifier {
  const {
    url,
    attempts = 5,
    timeoutMs = 5_000,
    baseDelayMs = 1_000,
    maxDelayMs = 15_000,
    deadlineMs = 60_000,
    queueSize = 200,
    log = console,
    random = Math.random,
  } = options;
  const queue: { body: string; label: string }[] = [];
  const counts = { delivered: 0, failed: 0, dropped: 0 };
  let running = false;
  let waiters: (() => void)[] = [];

  async function attempt(body: string, ms: number): Promise<Attempt> {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(Math.max(ms, 1)),
      });
      await res.body?.cancel().catch(() => {});
      if (res.ok) return { ok: true };
      const retry = res.status === 408 || res.status === 429 || res.status >= 500;
      const after = Number(res.headers.get('retry-after'));
      return {
        ok: false,
        retry,
        reason: `HTTP ${res.status}`,
        retryAfterMs: Number.isFinite(after) && after > 0 ? after * 1000 : undefined,
      };
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string } };
      // Only the error's kind: fetch's messages may quote the URL, which is a credential.
      const reason =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `no answer within ${ms} ms`
          : `network error (${e.cause?.code ?? e.name ?? 'unknown'})`;
      return { ok: false, retry: true, reason };
    }
  }

  async function deliver(job: { body: string; label: string }): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    let last: Attempt = { ok: false, retry: false, reason: 'not attempted' };
    let n = 0;
    while (n < attempts) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      n++;
      last = await attempt(job.body, Math.min(timeoutMs, left));
      if (last.ok) {
        counts.delivered++;
        return;
      }
      if (!last.retry || n >= attempts) break;
      const backoff = backoffDelay(n, { initialMs: baseDelayMs, maxMs: maxDelayMs, jitter: [0.5, 1], random });
      const wait = Math.min(maxDelayMs, Math.max(backoff, last.retryAfterMs ?? 0));
      if (Date.now() + wait >= deadline) break;
      await sleep(wait);
    }
    counts.failed++;
    log.error(
      `[notify] gave up on ${job.label} after ${n} attempt${n === 1 ? '' : 's'}: ${last.ok ? 'ok' : last.reason}`,
    );
  }

  function pump() {
    if (running) return;
    running = true;
    void (async () => {
      try {
        for (let job = queue.shift(); job; job = queue.shift()) {
          await deliver(job).catch((err: unknown) => {
            counts.failed++;
            log.error(`[notify] delivering ${job!.label} failed unexpectedly: ${(err as Error)?.name ?? 'error'}`);
          });
        }
      } finally {
        running = false;
        const done = waiters;
        waiters = [];
        done.forEach((w) => w());
      }
    })();
  }

  return {
    send(message, label) {
      try {
        const body = JSON.stringify(message);
        if (queue.length >= queueSize) {
          const dropped = queue.shift()!;
          counts.dropped++;
          log.warn(
            `[notify] queue full (${queueSize} waiting): dropped ${dropped.label}; ${counts.dropped} dropped since start`,
          );
        }
        queue.push({ body, label });
        pump();
      } catch (err) {
        log.error(`[notify] could not queue ${label}: ${(err as Error)?.name ?? 'error'}`);
      }
    },
    idle: () => (running || queue.length ? new Promise<void>((resolve) => waiters.push(resolve)) : Promise.resolve()),
    stats: () => ({ queued: queue.length, ...counts }),
  };
}

// ── The process's notifier ──────────────────────────────────────────────────────────────────

const holder = globalThis as unknown as { countersignNotifier?: { url: string; notifier: Notifier | null } };

// Read at each call, so a changed environment (tests, a restart with another URL) takes effect.
function processNotifier(): Notifier | null {
  const url = process.env.COUNTERSIGN_WEBHOOK_URL?.trim();
  if (!url) return null;
  if (holder.countersignNotifier?.url !== url) {
    let valid = false;
    try {
      valid = ['http:', 'https:'].includes(new URL(url).protocol);
    } catch {
      valid = false;
    }
    if (!valid) console.error('[notify] COUNTERSIGN_WEBHOOK_URL is not an http(s) URL: notifications are off');
    holder.countersignNotifier = { url, notifier: valid ? createNotifier({ url }) : null };
  }
  return holder.countersignNotifier.notifier;
}

/** Whether messages are sent at all (COUNTERSIGN_WEBHOOK_URL is set and valid). */
export const notificationsEnabled = () => processNotifier() !== null;

/** A new request is waiting for reviewers. Call after the transaction committed; returns at once. */
export function notifyApprovalRequested(view: ApprovalView): void {
  try {
    const notifier = processNotifier();
    if (!notifier || view.status !== 'pending') return;
    notifier.send(approvalRequestedMessage(view), `approval ${view.id} requested`);
  } catch (err) {
    console.error(`[notify] approval ${view?.id} requested: not queued (${(err as Error)?.name ?? 'error'})`);
  }
}

/** A reviewer decided. Call after the transaction committed; returns at once. */
export function notifyDecision(view: ApprovalView, decision: DecisionNotice): void {
  try {
    const notifier = processNotifier();
    if (!notifier) return;
    notifier.send(decisionMessage(view, decision), `approval ${view.id} ${decision.decision}`);
  } catch (err) {
    console.error(`[notify] approval ${view?.id} decision: not queued (${(err as Error)?.name ?? 'error'})`);
  }
}

/** Resolves once this process's queue is empty (for tests and graceful shutdown). */
export async function flushNotifications(): Promise<void> {
  await holder.countersignNotifier?.notifier?.idle();
}
