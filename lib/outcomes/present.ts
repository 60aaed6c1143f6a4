// How outcome classifications read to people: labels and tones, one table each. Pure.
import type { Boundary, Category, Delivery, ObservedTask, Retry } from './schemas';

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
