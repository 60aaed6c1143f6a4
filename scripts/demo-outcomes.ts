// Demo outcome records: realistic incidents that between them exercise every row of docs/design.md's
// classification table, multi-attempt stories included, spread over the last seven days.
import { createHash } from 'node:crypto';
import type { Outcome } from '@/lib/outcomes/schemas';
import type { Story } from './lib/demo-story-kit';
import { transportStories } from './lib/demo-stories-transport';
import { toolStories } from './lib/demo-stories-tools';
import { gatewayStories } from './lib/demo-stories-gateway';
import { taskStories } from './lib/demo-stories-tasks';
import { resolutionStories } from './lib/demo-stories-resolution';

// billing-mcp and orders-mcp are trusted by the demo seed; crm-mcp is not, so its read-only
// hints are display-only and its tools count as writes.
export const DEMO_TRUSTED_SERVERS = ['billing-mcp', 'orders-mcp'];

// Task stories first: older than the others, so the newest records stay the classic ones.
const stories: Story[] = [...taskStories, ...transportStories, ...toolStories, ...gatewayStories, ...resolutionStories];

// A small deterministic generator, so every machine gets the same demo data.
function prng(seed: number) {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const digest = (s: string) => 'sha256:' + createHash('sha256').update(s).digest('hex');

function recordsOf(story: Story, start: number, suffix = ''): Outcome[] {
  let at = start;
  const attempts = new Map<string, number>();
  return story.steps.map((step, i) => {
    at += step.afterMs ?? 0;
    const attemptKey = step.key ?? `${step.tool.server}/${step.tool.name}/${step.summary}`;
    // A later status of the same task is the same attempt, seen again.
    const sameTask =
      step.observed.task != null && story.steps.slice(0, i).some((s) => s.observed.task?.id === step.observed.task?.id);
    if (!sameTask) attempts.set(attemptKey, (attempts.get(attemptKey) ?? 0) + 1);
    return {
      eventId: `demo_${story.ref}${suffix}_${i}`,
      occurredAt: new Date(at).toISOString(),
      durationMs: step.observed.clientError === 'timeout' ? 30_000 : 80 + ((i * 37) % 400),
      requestRef: story.ref + suffix,
      idempotencyKey: step.key,
      attempt: attempts.get(attemptKey),
      organization: step.organization ?? story.organization,
      principal: step.principal ?? story.principal,
      agent: story.agent,
      server: step.tool.server,
      serverVersion: '2.3.0',
      protocolVersion: '2025-11-25',
      tool: { name: step.tool.name, annotations: step.tool.annotations },
      mcpRequestId: i,
      grantId: step.grantId,
      argsDigest: digest(step.args ?? step.summary),
      summary: step.summary,
      // A repeat of a task story is another task: its own task id.
      observed: step.observed.task
        ? { ...step.observed, task: { ...step.observed.task, id: step.observed.task.id + suffix } }
        : step.observed,
    };
  });
}

/** Every story once, recently, plus `background` repeats spread over the last seven days. */
export function demoOutcomes(now = Date.now(), background = 240): Outcome[] {
  const random = prng(42);
  const records: Outcome[] = [];
  stories.forEach((story, i) => records.push(...recordsOf(story, now - (stories.length - i) * 7 * 60_000)));
  for (let n = 0; n < background; n++) {
    const story = stories[Math.floor(random() * stories.length)];
    const start = now - 7 * 24 * 3_600_000 + Math.floor(random() * 7 * 24 * 3_600_000 - 3_600_000);
    records.push(...recordsOf(story, start, `_${n.toString().padStart(3, '0')}`));
  }
  return records;
}
