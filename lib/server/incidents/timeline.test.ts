import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { decideApproval, revokeApproval, setPolicyRule } from '../approvals';
import { findingsByRecord, getIncident, incidentApiBody, incidentReport } from '.';
import { trustServer } from '../policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { cli } from '@/lib/auth/actor';
import {
  SERVER,
  TOOL,
  BLOCKED,
  value,
  makeKey,
  requester,
  redeemer,
  reviewer,
  admin,
  support,
  setUpIncidentActors,
  record,
  stage,
  approvedAndRedeemed,
  sleep,
  kinds,
} from '@/testing/incidents-fixtures';

beforeAll(setUpIncidentActors);

// ── the merged timeline ─────────────────────────────────────────────────────────────────────

describe('getIncident: outcome records and approvals, one timeline', () => {
  it('orders records, the request, the decision, the grant and its redemption by time', async () => {
    const ref = uniq('req');
    const blocked = await record(ref, { observed: BLOCKED, occurredAt: new Date(Date.now() - 60_000).toISOString() });
    const { approvalId, grantId } = await approvedAndRedeemed(ref);
    await sleep(5);
    const executed = await record(ref, { grantId });

    const incident = value(await getIncident(support, ref));
    expect(kinds(incident.timeline)).toEqual([
      'outcome',
      'approval_requested',
      'decision',
      'grant_issued',
      'grant_redeemed',
      'outcome',
    ]);
    const [first, requested, decision, issued, redeemed, last] = incident.timeline;
    expect(first).toMatchObject({ recordId: blocked, approvalId: null });
    expect(requested).toMatchObject({
      approvalId,
      requestedBy: `API key "${(requester as { name: string }).name}"`,
      principal: 'user_193',
      agent: 'support-bot',
      tool: 'add_note',
      server: SERVER,
      requiredApprovals: 1,
    });
    expect(decision).toMatchObject({
      approvalId,
      reviewer: reviewer.email,
      decision: 'approve',
      reason: 'Order 4411 checked',
    });
    expect(issued).toMatchObject({ grantId, issuedBy: reviewer.email });
    expect(redeemed).toMatchObject({ grantId, redeemedBy: `API key "${(redeemer as { name: string }).name}"` });
    expect(last).toMatchObject({ recordId: executed, grantId, approvalId });
    // Decisions are stamped by the app, grants by the database: the order is causal, each entry
    // keeps its own recorded time.
    expect(issued.at.getTime()).toBeLessThanOrEqual(redeemed.at.getTime());
    expect(first.at.getTime()).toBeLessThan(requested.at.getTime());

    expect(incident.approvals).toEqual([
      expect.objectContaining({ id: approvalId, status: 'redeemed', approvals: 1, requiredApprovals: 1 }),
    ]);
    // Blocked, then run under the grant, neither with an idempotency key: two operations (without a
    // key nothing makes two attempts one), the blocked one not done, the granted one done.
    expect(incident.sentence).toBe('1 operation done, 1 not done. 1 approval request: 1 redeemed.');
    // The write ran under a grant redeemed for it here: no finding.
    expect(incident.findings.map((f) => f.kind)).not.toContain('write_without_grant');
  });

  it('the API body and the Markdown report carry the same entries', async () => {
    const ref = uniq('req');
    const { grantId } = await approvedAndRedeemed(ref);
    await record(ref, { grantId });
    const incident = value(await getIncident(support, ref));
    const body = JSON.parse(JSON.stringify(incidentApiBody(incident)));
    expect(body.timeline.map((e: { kind: string }) => e.kind)).toEqual(kinds(incident.timeline));
    expect(body.timeline[1]).toMatchObject({
      kind: 'decision',
      at: incident.timeline[1].at.toISOString(),
      reviewer: reviewer.email,
      reason: 'Order 4411 checked',
    });
    expect(body).not.toHaveProperty('records');
    expect(body.approvals).toHaveLength(1);

    const md = incidentReport(incident);
    expect(md).toContain(`## Timeline (${incident.timeline.length})`);
    const rows = md.split('\n').filter((l) => /^\| \d{4}-/.test(l));
    expect(rows.map((r) => r.split(' | ')[1])).toEqual([
      'Approval requested',
      'Decision (approve)',
      'Grant issued',
      'Grant redeemed',
      'Outcome (completed · ok)',
    ]);
    expect(md).toContain('Reason: Order 4411 checked');
    expect(md).toContain('1 approval request: 1 redeemed.');
  });

  it('carries no argument of an open request: not in the incident, its API body or its report', async () => {
    const ref = uniq('req');
    await stage(ref);
    await approvedAndRedeemed(ref);
    // An admin, who may read the arguments on the request itself.
    const incident = value(await getIncident(admin, ref));
    expect(incident.approvals.map((a) => a.status).sort()).toEqual(['pending', 'redeemed']);
    for (const text of [
      JSON.stringify(incident),
      JSON.stringify(incidentApiBody(incident)),
      incidentReport(incident),
    ]) {
      expect(text).not.toContain('delivery after 17:00');
      expect(text).not.toContain('order_id');
    }
  });

  it('shows denials, revocations and expiry with who and why', async () => {
    const ref = uniq('req');
    const denied = await stage(ref);
    value(
      await decideApproval(reviewer, { id: denied.id, decision: 'deny', reason: 'Wrong order number', version: 1 }),
    );
    const revoked = await stage(ref);
    value(await revokeApproval(admin, { id: revoked.id, reason: 'Customer withdrew' }));
    await stage(ref, { pendingTtlSeconds: 1 });
    await sleep(1_100);

    const incident = value(await getIncident(support, ref));
    expect(kinds(incident.timeline)).toEqual([
      'approval_requested',
      'decision',
      'approval_requested',
      'revoked',
      'approval_requested',
      'expired',
    ]);
    expect(incident.timeline[1]).toMatchObject({
      decision: 'deny',
      reviewer: reviewer.email,
      reason: 'Wrong order number',
    });
    expect(incident.timeline[3]).toMatchObject({ revokedBy: admin.email, reason: 'Customer withdrew', grantId: null });
    expect(incident.timeline[5]).toMatchObject({ what: 'request' });
    expect(incident.approvals.map((a) => a.status)).toEqual(['denied', 'revoked', 'expired']);
  });

  it('exists with approvals only (no outcome records), and is not found with neither', async () => {
    const ref = uniq('req');
    const created = await stage(ref);
    const incident = value(await getIncident(support, ref));
    expect(incident.records).toEqual([]);
    expect(kinds(incident.timeline)).toEqual(['approval_requested']);
    expect(incident.timeline[0]).toMatchObject({ approvalId: created.id });
    expect(incident.sentence).toBe('No tool calls were recorded. 1 approval request: 1 pending.');
    expect(incident.findings).toEqual([]);
    expect(await getIncident(support, uniq('req'))).toMatchObject({ ok: false, failure: 'not_found' });
  });

  it('a key reading incidents sees approvals of its own organization only', async () => {
    const ref = uniq('req');
    await stage(ref);
    const acme = await makeKey(['outcomes:read'], 'acme');
    const globex = await makeKey(['outcomes:read'], 'globex');
    expect(kinds(value(await getIncident(acme, ref)).timeline)).toEqual(['approval_requested']);
    expect(await getIncident(globex, ref)).toMatchObject({ ok: false, failure: 'not_found' });
  });
});

// ── write_without_grant judged against the approval tables ──────────────────────────────────

describe('write_without_grant uses grants redeemed for that call in the incident', () => {
  it('a forged, unredeemed, or other-tool grant id counts as no grant', async () => {
    const ref = uniq('req');
    const { grantId } = await approvedAndRedeemed(ref);
    const genuine = await record(ref, { grantId });
    const forged = await record(ref, { grantId: randomUUID() });
    const otherTool = await record(ref, { grantId, tool: { ...TOOL, name: 'delete_note' } });
    // Approved but never redeemed.
    // {"note":"Customer asked for delivery after 18:00","order_id":"4412"}, its digest by hand.
    const other = { order_id: '4412', note: 'Customer asked for delivery after 18:00' };
    const otherDigest = 'sha256:bd42cc88874717151f1c55b154ff27c4283e476e7eb92189c804ae4396ec5fd3';
    const unredeemed = await stage(ref, { arguments: other, argsDigest: otherDigest });
    const decided = value(
      await decideApproval(reviewer, { id: unredeemed.id, decision: 'approve', reason: 'ok', version: 1 }),
    );
    const notRedeemed = await record(ref, { grantId: decided.grant!.id });
    // A grant redeemed under another reference does not cover a call here.
    const elsewhere = await approvedAndRedeemed(uniq('req'));
    const borrowed = await record(ref, { grantId: elsewhere.grantId });

    const incident = value(await getIncident(support, ref));
    const flagged = incident.findings.filter((f) => f.kind === 'write_without_grant').flatMap((f) => f.recordIds);
    expect(flagged.sort()).toEqual([forged, otherTool, notRedeemed, borrowed].sort());
    expect(flagged).not.toContain(genuine);
    expect(incident.findings.find((f) => f.recordIds[0] === forged)?.explanation).toContain(
      'matches no grant redeemed for it in this incident',
    );

    // The outcome list's badges judge the same way.
    const badges = await findingsByRecord(support, [ref]);
    expect(badges.get(genuine) ?? []).not.toContain('write_without_grant');
    expect(badges.get(forged)).toContain('write_without_grant');
  });

  it('follows the admin policy rules: a tool that needs no approval needs no grant', async () => {
    const server = uniq('free-mcp');
    await trustServer(cli, server);
    const ref = uniq('req');
    const free = await record(ref, { server, tool: { ...TOOL, name: 'append_log' } });
    const guarded = await record(ref, { server, tool: { ...TOOL, name: 'add_note' } });
    value(await setPolicyRule(cli, { server, tool: 'append_log', requiredApprovals: 0 }));
    const flagged = value(await getIncident(support, ref))
      .findings.filter((f) => f.kind === 'write_without_grant')
      .flatMap((f) => f.recordIds);
    expect(flagged).toEqual([guarded]);
    expect(flagged).not.toContain(free);
  });
});
