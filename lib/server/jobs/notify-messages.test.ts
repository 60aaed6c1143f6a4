import { describe, expect, it } from 'vitest';
import { approvalRequestedMessage, consoleBaseUrl, decisionMessage } from './notify';
import { ARGS_DIGEST, IDEMPOTENCY_KEY, GRANT_ID, TOKEN, makeView, allText } from '@/testing/notify-fixtures';

// ── Messages ────────────────────────────────────────────────────────────────────────────────

describe('messages', () => {
  it('a new request: who asks on whose behalf, tool, server, summary, approvals, link', () => {
    const m = approvalRequestedMessage(makeView(), 'https://countersign.example.com');
    expect(typeof m.text).toBe('string');
    expect(Array.isArray(m.blocks)).toBe(true);
    const text = allText(m);
    for (const part of [
      'support-bot',
      'user_193',
      'acme',
      'refund_payment',
      'billing-mcp',
      'Refund 40.00 EUR on order 4411',
      'needs 2 approvals',
    ]) {
      expect(m.text).toContain(part);
    }
    expect(text).toContain('https://countersign.example.com/approvals/6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f');
    expect(m.blocks![0]).toMatchObject({
      type: 'header',
      text: { type: 'plain_text', text: 'Approval needed: refund_payment on billing-mcp' },
    });
    // Every block is one Slack accepts from an incoming webhook.
    for (const b of m.blocks!) expect(['header', 'section', 'context']).toContain(b.type);
  });

  it('never carries the argument digest, the idempotency key, a grant id or a secret', () => {
    const view = makeView({
      summary: `Refund 40.00 EUR, token ${TOKEN}`,
      status: 'approved',
      grant: {
        id: GRANT_ID,
        issuedAt: new Date(),
        expiresAt: new Date(),
        redeemedAt: null,
        revokedAt: null,
        state: 'active',
      },
      decisions: [{ reviewer: 'rui@example.test', decision: 'approve', reason: 'ok', at: new Date() }],
    });
    for (const m of [
      approvalRequestedMessage(view, 'http://x'),
      decisionMessage(view, { reviewer: 'rui@example.test', decision: 'approve', reason: `fine ${TOKEN}` }, 'http://x'),
    ]) {
      const text = allText(m);
      for (const forbidden of [
        ARGS_DIGEST,
        IDEMPOTENCY_KEY,
        GRANT_ID,
        TOKEN,
        'argsDigest',
        'idempotencyKey',
        'grant"',
        'requestHash',
      ]) {
        expect(text).not.toContain(forbidden);
      }
      expect(text).toContain('[masked:github_token]');
      expect(Object.keys(m).sort()).toEqual(['blocks', 'text']);
    }
  });

  it('escapes Slack markup in caller text, so a summary cannot mention @channel or forge a link', () => {
    const m = approvalRequestedMessage(
      makeView({ summary: 'Refund <!channel> & <https://evil.example|click>' }),
      'http://x',
    );
    expect(allText(m)).not.toContain('<!channel>');
    expect(allText(m)).not.toContain('<https://evil.example');
    expect(m.text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
  });

  it('decisions: one of two approvals, the last approval, a denial with its reason', () => {
    const first = decisionMessage(
      makeView({
        decisions: [{ reviewer: 'rui@example.test', decision: 'approve', reason: 'checked', at: new Date() }],
        version: 2,
      }),
      { reviewer: 'rui@example.test', decision: 'approve', reason: 'checked' },
      'http://x',
    );
    expect(first.text).toContain('rui@example.test approved "checked" (1 of 2)');
    expect(first.text).toContain('waits for 1 approval more');

    const last = decisionMessage(
      makeView({
        status: 'approved',
        decisions: [
          { reviewer: 'rui@example.test', decision: 'approve', reason: 'checked', at: new Date() },
          { reviewer: 'rita@example.test', decision: 'approve', reason: 'agreed', at: new Date() },
        ],
      }),
      { reviewer: 'rita@example.test', decision: 'approve', reason: 'agreed' },
      'http://x',
    );
    expect(last.text).toContain('Approved (2 of 2), last by rita@example.test');
    expect(last.blocks![0]).toMatchObject({ text: { text: 'Approved: refund_payment on billing-mcp' } });

    const denied = decisionMessage(
      makeView({ status: 'denied' }),
      { reviewer: 'rui@example.test', decision: 'deny', reason: 'amount too high' },
      'http://x',
    );
    expect(denied.text).toContain('Denied by rui@example.test: "amount too high"');
    expect(denied.text).toContain('/approvals/6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f');
  });

  it('links to COUNTERSIGN_PUBLIC_URL, else localhost and PORT', () => {
    expect(consoleBaseUrl({ COUNTERSIGN_PUBLIC_URL: 'https://cs.example.com/', PORT: '4000' })).toBe(
      'https://cs.example.com',
    );
    expect(consoleBaseUrl({ PORT: '4000' })).toBe('http://localhost:4000');
    expect(consoleBaseUrl({})).toBe('http://localhost:3000');
  });
});
