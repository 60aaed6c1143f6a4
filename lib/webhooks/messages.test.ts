import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { slackMessage } from './slack';
import { isWebhookSecret, newWebhookSecret, signedHeaders, standardBody } from './standard';
import { nextDelay, retryAfterMs } from './retry';
import { webhookEventTypes } from './events';
import { eventData } from '@/testing/webhooks-fixtures';

const base = 'https://countersign.example.com';
const link = 'https://countersign.example.com/approvals/6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f';

describe('Slack messages', () => {
  it('name the request and link to it, for every event type', () => {
    const titles: Record<string, string> = {
      'approval.requested': 'Approval needed: refund_payment on billing-mcp',
      'approval.decided': 'Approval recorded: refund_payment on billing-mcp',
      'approval.approved': 'Approved: refund_payment on billing-mcp',
      'approval.denied': 'Denied: refund_payment on billing-mcp',
      'approval.expired': 'Expired: refund_payment on billing-mcp',
      'approval.revoked': 'Revoked: refund_payment on billing-mcp',
      'grant.redeemed': 'Run: refund_payment on billing-mcp',
    };
    for (const type of webhookEventTypes.filter((t) => t !== 'tool.changed' && t !== 'call.refused')) {
      const m = slackMessage(
        { type, data: eventData({ decision: 'approve', reviewer: 'rui@example.test', approvals: 1 }) },
        base,
      );
      expect(m.blocks![0]).toEqual({ type: 'header', text: { type: 'plain_text', text: titles[type] } });
      expect(m.text).toContain(link);
      for (const part of ['refund_payment', 'billing-mcp', 'user_193', 'acme']) expect(m.text).toContain(part);
      for (const b of m.blocks!) expect(['header', 'section', 'context']).toContain(b.type);
    }
    const decided = slackMessage(
      {
        type: 'approval.decided',
        data: eventData({ decision: 'approve', reviewer: 'rui@example.test', approvals: 1 }),
      },
      base,
    );
    expect(decided.text).toContain('rui@example.test approved (1 of 2)');
  });

  it('tool.changed: names the tool, the server and what differs, and links to the Tools page', () => {
    const data = {
      server: 'billing-mcp',
      tool: 'refund_payment',
      definitionHash: `sha256:${'1'.repeat(64)}`,
      acceptedHash: `sha256:${'2'.repeat(64)}`,
      differs: ['description', 'annotations'],
    };
    const changed = slackMessage({ type: 'tool.changed', data }, base);
    expect(changed.blocks![0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Tool changed: refund_payment on billing-mcp' },
    });
    expect(changed.text).toContain('(description, annotations)');
    expect(changed.text).toContain(`${base}/admin/tools?server=billing-mcp`);
    const held = slackMessage(
      { type: 'tool.changed', data: { ...data, acceptedHash: null, tool: '<!channel>' } },
      base,
    );
    expect(held.text).toMatch(/^New tool held: `&lt;!channel&gt;` is new on billing-mcp/);
    const body = JSON.parse(standardBody({ type: 'tool.changed', data, createdAt: new Date(0) }, base));
    expect(body.data).toEqual({ ...data, url: `${base}/admin/tools?server=billing-mcp` });
  });

  it('call.refused: names the category, tool, server and request, and links to the incident', () => {
    const data = {
      category: 'outcome_unknown',
      server: 'billing-mcp',
      tool: 'refund_payment',
      requestRef: 'req 8f2c',
      recordId: '4c1f0000-0000-4000-8000-000000000000',
    };
    const m = slackMessage({ type: 'call.refused', data }, base);
    expect(m.blocks![0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Call refused: refund_payment on billing-mcp' },
    });
    expect(m.text).toContain('(outcome_unknown), in request req 8f2c');
    expect(m.text).toContain(`${base}/incidents/req%208f2c`);
    const sneaky = slackMessage({ type: 'call.refused', data: { ...data, tool: '<!channel>' } }, base);
    expect(JSON.stringify([sneaky.text, sneaky.blocks![1]])).not.toContain('<!channel>');
    const body = JSON.parse(standardBody({ type: 'call.refused', data, createdAt: new Date(0) }, base));
    expect(body).toEqual({
      type: 'call.refused',
      timestamp: '1970-01-01T00:00:00.000Z',
      data: { ...data, url: `${base}/incidents/req%208f2c` },
    });
  });

  it('escape Slack markup in identifiers', () => {
    const m = slackMessage(
      { type: 'approval.requested', data: eventData({ tool: '<!channel> & <https://evil.example|x>' }) },
      base,
    );
    // mrkdwn (and the fallback text) is where Slack reads markup; a plain_text header shows it as typed.
    const mrkdwn = JSON.stringify([m.text, ...m.blocks!.filter((b) => b.type !== 'header')]);
    expect(mrkdwn).not.toContain('<!channel>');
    expect(mrkdwn).not.toContain('<https://evil.example');
    expect(m.text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|x&gt;');
  });
});

describe('Standard Webhooks', () => {
  it('a body of type, timestamp and data with the link; headers the library verifies', () => {
    const secret = newWebhookSecret();
    expect(isWebhookSecret(secret)).toBe(true);
    const body = standardBody(
      { type: 'approval.requested', data: eventData(), createdAt: new Date('2026-11-30T12:00:00Z') },
      base,
    );
    expect(JSON.parse(body)).toEqual({
      type: 'approval.requested',
      timestamp: '2026-11-30T12:00:00.000Z',
      data: { ...eventData(), url: link },
    });
    const h = signedHeaders(secret, 'msg_1', body, new Date());
    expect(h['webhook-id']).toBe('msg_1');
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, h)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, h)).toThrow();
    expect(() => new Webhook(secret).verify(body + ' ', h)).toThrow();
  });

  it('secrets: whsec_ and at least 24 bytes', () => {
    for (const bad of ['', 'whsec_', 'secret', `whsec_${Buffer.alloc(8).toString('base64')}`, 'whsec_!!!!'])
      expect(isWebhookSecret(bad), bad).toBe(false);
  });
});

describe('retries', () => {
  const policy = { maxAttempts: 4, initialMs: 1_000, maxMs: 60_000, random: () => 1 };
  const failed = { ok: false as const, retry: true, error: 'HTTP 500' };
  it('double, honour a longer Retry-After, stop at the last attempt or a final answer', () => {
    expect([1, 2, 3].map((n) => nextDelay(n, failed, policy))).toEqual([1_000, 2_000, 4_000]);
    expect(nextDelay(4, failed, policy)).toBeNull();
    expect(nextDelay(1, { ...failed, retry: false }, policy)).toBeNull();
    expect(nextDelay(1, { ...failed, retryAfterMs: 30_000 }, policy)).toBe(30_000);
  });
  it('Retry-After in seconds or as a date, capped', () => {
    const now = Date.parse('2026-11-30T12:00:00Z');
    expect(retryAfterMs('120', now, 60_000)).toBe(60_000);
    expect(retryAfterMs('5', now, 60_000)).toBe(5_000);
    expect(retryAfterMs('Mon, 30 Nov 2026 12:00:10 GMT', now, 60_000)).toBe(10_000);
    expect(retryAfterMs('soon', now, 60_000)).toBeUndefined();
    expect(retryAfterMs(undefined, now, 60_000)).toBeUndefined();
  });
});
