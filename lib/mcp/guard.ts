// The guards asked with a write (docs/design.md "Guards at the point of execution"; `guard` on
// `POST /api/v1/approvals`): may this call be made now? The console decides in the request that
// stages the write, on what it holds and by its own clock, so every gateway and agent asking
// agrees and a write costs no round trip more. The records the caller has not posted yet that bear
// on the call go with it, so a write's own unknown of a moment ago is seen. A refusal is stored by
// the console (never sent, with the guard's category, under the event id given) and is not
// recorded again by the caller. Shared by the gateway and `withCountersign`.
import { bearsOn, type GuardSubject } from '../guards/bears-on';
import { MAX_CHECK_RECORDS, type GuardAnswer, type StagingGuard } from '../guards/schemas';
import type { OutcomeReporter } from './reporter';

export type { GuardAnswer, StagingGuard } from '../guards/schemas';
export type GuardRefusal = Extract<GuardAnswer, { decision: 'refuse' }>;

/** The staging body's `guard`: the refusal's event id, the operation's key, the unposted records that bear on the call. */
export function guardOf(reporter: OutcomeReporter, call: GuardSubject, eventId: string): StagingGuard {
  const records = reporter
    .pending()
    .filter((r) => bearsOn(r, call))
    .slice(-MAX_CHECK_RECORDS);
  return {
    eventId,
    ...(call.idempotencyKey ? { idempotencyKey: call.idempotencyKey } : {}),
    ...(records.length ? { records } : {}),
  };
}

/** The guards' refusal in a staging answer (200 `{ guard }`), or null when it is not one. */
export function guardRefusalOf(body: unknown): GuardRefusal | null {
  const guard = (body as { guard?: Partial<GuardRefusal> } | null)?.guard;
  return guard?.decision === 'refuse' && typeof guard.category === 'string' && typeof guard.text === 'string'
    ? (guard as GuardRefusal)
    : null;
}
