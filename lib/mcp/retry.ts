// Retrying the way the classification says (docs/design.md's `retry` column), and no other way:
//
//   backoff            → wait, growing each time, and call again; bounded attempts
//   after_state_check  → ask the caller's state check; only "not done" allows a replay, with the
//                        SAME idempotency key and the SAME input; "done" or "unknown" stops
//   no, after_correction, after_reauth, after_approval, after_input
//                      → stop: a person or a changed input must come first
//
// A replay of a write asks for a new approval (the first grant was spent), so people see it.
import { isSuccess } from '../outcomes/classify';
import type { Classification, Retry } from '../outcomes/schemas';
import { backoffDelay } from '../backoff';
import { sleep } from './countersign-http';
import type { CallOptions, GuardedCallResult } from './countersign-client';

export type RetryStep = 'stop' | 'backoff' | 'check_state';

const STEPS: Record<Retry, RetryStep> = {
  no: 'stop',
  backoff: 'backoff',
  after_state_check: 'check_state',
  after_correction: 'stop',
  after_reauth: 'stop',
  after_approval: 'stop',
  after_input: 'stop',
};

/** What an automatic retry may do after this outcome. */
export function retryStep(classification: Pick<Classification, 'retry'>): RetryStep {
  return STEPS[classification.retry];
}

/** `done`: the write took effect (stop, do not repeat). `not_done`: it did not (replay is safe). */
export type StateCheckVerdict = 'done' | 'not_done' | 'unknown';

export interface RetryPolicy {
  /** Attempts in all, the first included (default 3, like Countersign's finding bound). */
  maxAttempts?: number;
  /** The first wait (default 500 ms); each later one is longer, up to `maxDelayMs` (default 10 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Reads the current state after an uncertain write. Without it, an uncertain write is not replayed. */
  stateCheck?: (last: GuardedCallResult) => Promise<StateCheckVerdict>;
  signal?: AbortSignal;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export type RetryStop =
  'succeeded' | 'not_retryable' | 'attempts_exhausted' | 'state_done' | 'state_unknown' | 'no_state_check' | 'aborted';

export interface RetryOutcome {
  /** The last attempt's outcome (after `state_done`: the uncertain attempt the check confirmed). */
  final: GuardedCallResult;
  attempts: GuardedCallResult[];
  stopped: RetryStop;
  /** Set when a state check ran: what it said last. */
  state?: StateCheckVerdict;
  /** The HTTP status of posting that verdict to Countersign (null: not posted or no answer). */
  stateReported?: number | null;
}

interface ToolCaller {
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    call: CallOptions,
  ): Promise<GuardedCallResult>;
  /** CountersignClient's: posts the verdict on the uncertain record (docs/api.md state-check). */
  reportStateCheck?(
    record: GuardedCallResult['record'],
    verdict: 'happened' | 'did_not_happen',
    note: string,
  ): Promise<number | null>;
}

const STATE_NOTE: Record<'done' | 'not_done', string> = {
  done: "The retry helper's state check found the write in effect; it was not repeated.",
  not_done: "The retry helper's state check found no trace of the write; it is repeated with the same key and input.",
};

export async function callToolWithRetry(
  caller: ToolCaller,
  params: { name: string; arguments?: Record<string, unknown> },
  call: CallOptions,
  policy: RetryPolicy = {},
): Promise<RetryOutcome> {
  // One frozen copy: every attempt sends exactly the same input under the same key.
  const input = Object.freeze({ name: params.name, arguments: structuredClone(params.arguments ?? {}) });
  const maxAttempts = Math.max(1, policy.maxAttempts ?? 3);
  const wait = policy.sleep ?? sleep;
  const first = call.attempt ?? 1;
  const attempts: GuardedCallResult[] = [];
  let state: StateCheckVerdict | undefined;
  let stateReported: number | null | undefined;

  for (let n = 1; ; n++) {
    const result = await caller.callTool(
      { name: input.name, arguments: structuredClone(input.arguments) },
      { ...call, attempt: first + n - 1 },
    );
    attempts.push(result);
    const done = (stopped: RetryStop): RetryOutcome => ({
      final: result,
      attempts,
      stopped,
      ...(state ? { state } : {}),
      ...(stateReported !== undefined ? { stateReported } : {}),
    });

    const step = retryStep(result.classification);
    if (step === 'stop') return done(isSuccess(result.classification) ? 'succeeded' : 'not_retryable');
    if (n >= maxAttempts) return done('attempts_exhausted');
    if (policy.signal?.aborted) return done('aborted');
    if (step === 'check_state') {
      if (!policy.stateCheck) return done('no_state_check');
      state = await policy.stateCheck(result);
      // The verdict resolves the unknown in Countersign, so nobody checks it again by hand.
      if (state !== 'unknown' && caller.reportStateCheck)
        stateReported = await caller
          .reportStateCheck(result.record, state === 'done' ? 'happened' : 'did_not_happen', STATE_NOTE[state])
          .catch(() => null);
      if (state === 'done') return done('state_done');
      if (state === 'unknown') return done('state_unknown');
    }
    await wait(
      backoffDelay(n, {
        initialMs: policy.initialDelayMs ?? 500,
        maxMs: policy.maxDelayMs ?? 10_000,
        random: policy.random,
      }),
      policy.signal,
    );
    if (policy.signal?.aborted) return done('aborted');
  }
}
