import { describe, expect, it } from 'vitest';
import { classifyRecord } from '@/lib/outcomes/classify';
import { categories, deliveries, outcomeSchema } from '@/lib/outcomes/schemas';
import { DEMO_TRUSTED_SERVERS, demoOutcomes } from './demo-outcomes';

const records = demoOutcomes(Date.UTC(2026, 10, 30, 12));
const classified = records.map((r) => ({ r, c: classifyRecord(r, DEMO_TRUSTED_SERVERS.includes(r.server)) }));

describe('demo outcome records', () => {
  it('are all valid API records with unique event ids', () => {
    for (const r of records) expect(outcomeSchema.safeParse(r).success, r.eventId).toBe(true);
    expect(new Set(records.map((r) => r.eventId)).size).toBe(records.length);
  });

  it('cover every delivery state and every category except "not_sent" (no reason given)', () => {
    expect(new Set(classified.map(({ c }) => c.delivery))).toEqual(new Set(deliveries));
    const seen = new Set(classified.map(({ c }) => c.category));
    expect(categories.filter((k) => !seen.has(k))).toEqual(['not_sent']);
  });

  it('include both sides of the read-only rule: trusted reads rejected, writes unknown, for the same failure', () => {
    const upstream = classified.filter(({ c }) => c.category === 'upstream_failure');
    expect(upstream.some(({ c }) => c.readOnly && c.delivery === 'rejected')).toBe(true);
    expect(upstream.some(({ c }) => !c.readOnly && c.delivery === 'unknown')).toBe(true);
    // crm-mcp is untrusted: its readOnlyHint does not make its lookup read-only.
    expect(classified.filter(({ r }) => r.server === 'crm-mcp').every(({ c }) => !c.readOnly)).toBe(true);
  });

  it('include multi-attempt incidents under one request reference', () => {
    const refund = records.filter((r) => r.requestRef === 'req_refund_4411');
    expect(refund.filter((r) => r.idempotencyKey === 'refund-4411-v1').map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('include a story recorded by the gateway: a read, a held write approved and redeemed, a blocked tool', () => {
    const story = classified.filter(({ r }) => r.requestRef === 'req_gateway_4490');
    expect(
      story.map(({ r, c }) => [r.agent, r.tool.name, c.delivery, c.category, r.grantId ?? null, r.attempt]),
    ).toEqual([
      ['claude-desktop via countersign-gateway', 'list_refunds', 'completed', 'ok', null, 1],
      ['claude-desktop via countersign-gateway', 'refund_payment', 'completed', 'ok', 'grt_demo_gateway_4490', 1],
      ['claude-desktop via countersign-gateway', 'admin_refund_any', 'never_sent', 'denied_by_policy', null, 1],
    ]);
    // The background repeats of it are the gateway's too.
    const repeats = records.filter((r) => r.requestRef.startsWith('req_gateway_4490_'));
    expect(repeats.every((r) => r.agent === 'claude-desktop via countersign-gateway')).toBe(true);
  });

  it('spread over the last seven days', () => {
    const times = records.map((r) => Date.parse(r.occurredAt));
    const now = Date.UTC(2026, 10, 30, 12);
    expect(Math.min(...times)).toBeGreaterThan(now - 8 * 24 * 3_600_000);
    expect(Math.max(...times)).toBeLessThanOrEqual(now);
  });

  it('include MCP tasks (completed, still running, expired, cancelled) and a folded -32602 on a write', () => {
    const story = (ref: string) =>
      classified
        .filter(({ r }) => r.requestRef === ref)
        .map(({ r, c }) => [r.observed.task?.id ?? null, r.observed.task?.status ?? null, c.delivery, c.category]);
    expect(story('req_task_ledger_5120')).toEqual([
      ['tsk_demo_ledger_5120', 'working', 'unknown', 'task_running'],
      ['tsk_demo_ledger_5120', 'completed', 'completed', 'ok'],
    ]);
    expect(story('req_task_prices_5133')).toEqual([
      ['tsk_demo_prices_5133', 'working', 'unknown', 'task_running'],
      ['tsk_demo_prices_5133', 'input_required', 'unknown', 'task_input_required'],
    ]);
    expect(story('req_task_export_5140')).toEqual([
      ['tsk_demo_export_5140', 'working', 'unknown', 'task_running'],
      ['tsk_demo_export_5140', 'working', 'unknown', 'task_expired'],
    ]);
    expect(story('req_task_export_5141').map((s) => s[3])).toEqual(['task_running', 'task_cancelled']);
    // A task's later status is the same attempt seen again, not a retry.
    expect(records.filter((r) => r.requestRef === 'req_task_ledger_5120').map((r) => r.attempt)).toEqual([1, 1]);
    expect(story('req_refund_4520')).toEqual([[null, null, 'unknown', 'invalid_arguments']]);
    // Repeats are other tasks: no task id is shared across request references.
    const refsOf = new Map<string, Set<string>>();
    for (const r of records)
      if (r.observed.task)
        refsOf.set(r.observed.task.id, (refsOf.get(r.observed.task.id) ?? new Set()).add(r.requestRef));
    expect([...refsOf.values()].every((refs) => refs.size === 1)).toBe(true);
  });
});
