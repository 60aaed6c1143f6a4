// bench:approvals' calls to the console's data layer, in a worker process of their own (./worker.ts):
// subscribing the webhook endpoint, staging requests and timing each decision, with no HTTP between;
// bench:ui stages its two queues through it (with and without arguments).
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import type { Actor } from '@/lib/auth/actor';
import { noteArguments, refundArguments, staged } from './arguments';
import { serveWorker } from './worker';

/** What a staged request carries: small arguments, 4 KiB of them, or none (the digest alone). */
export type Carrying = 'arguments' | '4 KiB of arguments' | 'no arguments';

/** A write staged the way a gateway stages one; `n` makes it unique. */
export const requestBody = (n: string, carrying: Carrying = 'arguments') => {
  const args = noteArguments(n, carrying === '4 KiB of arguments' ? 4096 : undefined);
  return {
    requestRef: `req-${n}`,
    organization: 'acme',
    principal: 'user_193',
    server: 'bench-mcp',
    tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    ...(carrying === 'no arguments' ? { argsDigest: staged(args).argsDigest } : staged(args)),
    summary: `Update the note on order ${n}`,
  };
};

/** A refund (two approvals: destructive and open-world on a trusted server), with its arguments or not. */
export const refundBody = (n: string, withArguments: boolean) => {
  const args = refundArguments(n);
  return {
    requestRef: `req_refund_${n}`,
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: {
      name: 'refund_payment',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    ...(withArguments ? staged(args) : { argsDigest: staged(args).argsDigest }),
    summary: `Refund ${String(args.amount)} EUR on order ${n}: damaged on arrival`,
    resource: { type: 'order', id: n },
    pendingTtlSeconds: 86_400,
  };
};

export const inWorker = {
  async subscribe(url: string) {
    const { createWebhookEndpoint } = await import('@/lib/server/webhooks/webhooks');
    const admin: Actor = {
      kind: 'user',
      userId: '00000000-0000-4000-8000-000000000001',
      email: 'admin@bench.local',
      name: 'admin',
      role: 'admin',
      principalId: 'bench-admin',
      tokenId: null,
    };
    const events = ['approval.requested', 'approval.decided', 'approval.approved'] as const;
    const created = await createWebhookEndpoint(admin, { url, format: 'standard', events: [...events] });
    if (!created.ok) throw new Error(`createWebhookEndpoint: ${created.failure}`);
  },
  /** `count` pending requests by the requesting key: notes, or refunds with their arguments or without; their ids. */
  async request(keyId: string, count: number, kind: 'note' | 'refund with arguments' | 'refund without' = 'note') {
    const { requestApproval } = await import('@/lib/server/approvals');
    const requester: Actor = {
      kind: 'apiKey',
      keyId,
      name: 'bench-gateway',
      scopes: ['approvals:request'],
      organization: null,
    };
    const ids: string[] = [];
    for (let n = 0; n < count; n++) {
      const body =
        kind === 'note'
          ? requestBody(`d${n}`)
          : refundBody(String((kind === 'refund without' ? 50_000 : 40_000) + n), kind !== 'refund without');
      const r = await requestApproval(
        requester,
        `${kind.replaceAll(' ', '-')}-${n}`,
        approvalRequestSchema.parse(body),
      );
      if (!r.ok) throw new Error(`requestApproval: ${r.failure} ${r.detail ?? ''}`);
      ids.push(r.value.approval.id);
    }
    return ids;
  },
  /** Approves each request in turn as the reviewer; each decision's milliseconds. */
  async decide(reviewer: Actor, ids: string[]) {
    const { decideApproval } = await import('@/lib/server/approvals');
    const ms: number[] = [];
    for (const id of ids) {
      const t0 = performance.now();
      const r = await decideApproval(reviewer, { id, decision: 'approve', reason: 'checked', version: 1 });
      ms.push(performance.now() - t0);
      if (!r.ok) throw new Error(`decideApproval: ${r.failure}`);
    }
    return ms;
  },
};

if (process.argv.includes('--worker')) serveWorker(inWorker);
