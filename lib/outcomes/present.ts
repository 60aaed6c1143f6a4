// How outcome classifications read to people: labels and tones, one table each. Pure.
import type { Boundary, Category, Delivery, ObservedRound, ObservedTask, Retry, RoundKind } from './schemas';

export type Tone = 'neutral' | 'good' | 'warn' | 'bad' | 'info';

export const deliveryLabel: Record<Delivery, string> = {
  completed: 'Completed',
  rejected: 'Rejected',
  never_sent: 'Never sent',
  unknown: 'Unknown',
};

export const deliveryHelp: Record<Delivery, string> = {
  completed: 'The tool ran and returned a result.',
  rejected: 'Something refused the call; it had no effect.',
  never_sent: 'The call never left the caller.',
  unknown: 'Sent, with no trustworthy answer: it may have taken effect.',
};

/** Green only for a completed, valid result (docs/design.md: a success is only ever completed + ok). */
export function outcomeTone(delivery: Delivery, category: Category): Tone {
  if (delivery === 'completed') return category === 'ok' ? 'good' : 'warn';
  if (delivery === 'unknown') return 'bad';
  return delivery === 'rejected' ? 'warn' : 'neutral';
}

export const boundaryLabel: Record<Boundary, string> = {
  client: 'Client',
  admission: 'Admission (HTTP)',
  protocol: 'Protocol (JSON-RPC)',
  tool: 'Tool',
  none: '—',
};

export const retryLabel: Record<Retry, string> = {
  no: 'Do not retry',
  backoff: 'Retry with backoff',
  after_correction: 'After correcting the input',
  after_reauth: 'After re-authenticating',
  after_approval: 'After approval',
  after_state_check: 'After checking state',
  after_input: 'After human input',
};

export const categoryLabel = (c: Category) => c.replaceAll('_', ' ');

/** An unknown write is the outcome people must never miss: it may have changed something. */
export const isUnknownWrite = (c: { delivery: Delivery; readOnly: boolean }) => c.delivery === 'unknown' && !c.readOnly;

/** An MCP task's status as seen by one record, e.g. "working", "expired (last seen working)". */
export const taskStatusLabel = (t: Pick<ObservedTask, 'status' | 'expired'>) =>
  t.expired ? `expired (last seen ${t.status.replaceAll('_', ' ')})` : t.status.replaceAll('_', ' ');

const roundKindLabel: Record<RoundKind, string> = {
  elicitation_form: 'elicitation (form)',
  elicitation_url: 'elicitation (URL)',
  sampling: 'sampling',
  roots: 'roots',
  approval: 'approval',
};

/** When a round came, from the call's first request: "+0.4 s", "+2 min 5 s", "+1 h 3 min". */
export function roundTime(atMs: number): string {
  if (atMs < 60_000) return `+${(Math.floor(atMs / 100) / 10).toFixed(1)} s`;
  const s = Math.floor(atMs / 1000);
  if (s < 3600) return `+${Math.floor(s / 60)} min ${s % 60} s`;
  return `+${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Who asked what in a round, never the question: "server asked: elicitation (form), 2 requests". */
export function roundLabel(round: ObservedRound): string {
  if (round.by === 'gateway' && round.asked.length === 1 && round.asked[0] === 'approval')
    return 'gateway: approval pending';
  const what = round.asked.length ? round.asked.map((k) => roundKindLabel[k]).join(', ') : 'input';
  return `${round.by} asked: ${what}, ${round.requests} ${round.requests === 1 ? 'request' : 'requests'}`;
}
