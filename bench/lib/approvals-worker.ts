// bench:approvals' calls to the console's data layer, in a worker process of their own (./worker.ts):
// subscribing the webhook endpoint, staging requests and timing each decision, with no HTTP between.
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import type { Actor } from '@/lib/auth/actor';
import { serveWorker } from './worker';

/** A write staged the way a gateway stages one; `n` makes it unique. */
export const requestBody = (n: string) => ({
  requestRef: `req-${n}`,
  organization: 'acme',
  principal: 'user_193',
  server: 'bench-mcp',
  tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
  argsDigest: `sha256:${'ab'.repeat(32)}`,
  summary: `Update the note on order ${n}`,
});

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
  /** `count` pending requests by the requesting key; their ids. */
  async request(keyId: string, count: number) {
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
      const r = await requestApproval(requester, `decide-${n}`, approvalRequestSchema.parse(requestBody(`d${n}`)));
      if (!r.ok) throw new Error(`requestApproval: ${r.failure}`);
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
