// Rules that hold for every classification, over every combination of observed fields.
import { describe, expect, it } from 'vitest';
import { classifyOutcome, isSuccess } from './classify';
import {
  authErrors,
  classificationSchema,
  clientBlocks,
  clientErrors,
  outputValidations,
  type Classification,
  type Observed,
  type ObservedResult,
} from './schemas';

describe('classifyOutcome: invariants over generated observations', () => {
  const results: (ObservedResult | null)[] = [
    null,
    ...[...outputValidations, undefined].map((outputValidation) => ({ isError: false, outputValidation })),
    ...[null, 'VALIDATION', 'conflict', 'KABOOM', 'unknown_tool'].map((errorCategory) => ({
      isError: true,
      errorCategory,
    })),
  ];
  const observations: Observed[] = [];
  for (const isSent of [true, false])
    for (const clientBlock of [null, ...clientBlocks])
      for (const httpStatus of [null, 200, 302, 400, 401, 403, 404, 429, 500, 502, 503, 504])
        for (const authError of [null, ...authErrors])
          for (const jsonRpcErrorCode of [null, -32700, -32601, -32602, -32603, -32042, -32001, -32000, 7])
            for (const clientError of [null, ...clientErrors])
              for (const result of results)
                observations.push({
                  sent: isSent,
                  clientBlock,
                  httpStatus,
                  authError,
                  jsonRpcErrorCode,
                  clientError,
                  result,
                });
  // Version 2: tasks and resultType over a smaller set (the full product is too large).
  for (const task of [
    { id: 't', status: 'working' as const },
    { id: 't', status: 'input_required' as const },
    { id: 't', status: 'working' as const, expired: true },
    { id: 't', status: 'completed' as const },
    { id: 't', status: 'failed' as const },
    { id: 't', status: 'cancelled' as const },
  ])
    for (const httpStatus of [null, 200, 401, 500])
      for (const jsonRpcErrorCode of [null, -32602, -32603, -32022])
        for (const clientError of [null, ...clientErrors])
          for (const result of results)
            for (const resultType of [null, 'task' as const, 'input_required' as const])
              observations.push({ sent: true, httpStatus, jsonRpcErrorCode, clientError, result, task, resultType });
  const callers = [
    { annotations: { readOnlyHint: true }, serverTrusted: true },
    { annotations: { readOnlyHint: true }, serverTrusted: false },
    { annotations: undefined, serverTrusted: true },
  ];

  // Returns the broken rule, if any; checked without expect() per case to stay fast.
  function brokenRule(observed: Observed, caller: (typeof callers)[number], c: Classification): string | null {
    const answered = observed.httpStatus != null || observed.jsonRpcErrorCode != null || observed.result != null;
    if (!classificationSchema.safeParse(c).success) return 'not a valid classification';
    if (isSuccess(c) !== (c.delivery === 'completed' && c.category === 'ok')) return 'isSuccess disagrees';
    if (c.category === 'ok') {
      if (c.boundary !== 'none' || c.delivery !== 'completed' || c.retry !== 'no') return 'ok outside completed';
      if (observed.result?.isError !== false) return 'ok without a clean result';
      if ((observed.httpStatus ?? 0) >= 400 || observed.jsonRpcErrorCode != null) return 'ok despite an error';
    }
    if (/successfully/.test(c.whatHappened) !== (c.category === 'ok')) return 'success wording without ok';
    if (c.readOnly !== (caller.serverTrusted && caller.annotations?.readOnlyHint === true)) {
      return 'read-only without a trusted hint';
    }
    if ((c.delivery === 'never_sent') !== (!observed.sent && !answered)) return 'never_sent despite an answer';
    // A write that may have run never reads as safely refused. A guard's outcome_unknown refusal
    // sent nothing itself: the earlier attempt it names is the unknown one.
    if (
      !c.readOnly &&
      c.retry === 'after_state_check' &&
      c.category !== 'conflict' &&
      c.category !== 'outcome_unknown' &&
      c.delivery !== 'unknown'
    ) {
      return 'uncertain write not unknown';
    }
    return null;
  }

  it(`holds for ${observations.length * callers.length} combinations`, () => {
    const failures: string[] = [];
    for (const observed of observations) {
      for (const caller of callers) {
        const c = classifyOutcome({ observed, ...caller, toolName: 'refund_payment' });
        const broken = brokenRule(observed, caller, c);
        if (broken && failures.length < 5) failures.push(`${broken}: ${JSON.stringify({ observed, caller, c })}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
