// The guards' question before a write (docs/design.md "Guards at the point of execution";
// `POST /api/v1/guards/check`): may this call be made now? The console decides on what it holds,
// by its own clock, so every gateway and agent asking agrees. The records the caller has not
// posted yet go with the question, so a write's own unknown of a moment ago is seen. A refusal is
// stored by the console (never sent, with the guard's category, under the event id given) and is
// not recorded again by the caller. Shared by the gateway and `withCountersign`.
import { MAX_CHECK_RECORDS, type GuardAnswer, type GuardCheck } from '../guards/schemas';
import type { Outcome } from '../outcomes/schemas';
import { callApi, type CountersignEndpoint } from './countersign-http';
import type { OutcomeReporter } from './reporter';

export type { GuardAnswer } from '../guards/schemas';

/** What is asked: the call about to be made (the records not posted yet are added here). */
export type GuardQuestion = Omit<GuardCheck, 'records'>;

/** The console's answer; null when it could not be had (unreachable, failing): the caller fails closed. */
export async function askGuards(
  endpoint: CountersignEndpoint,
  reporter: OutcomeReporter,
  question: GuardQuestion,
  signal?: AbortSignal,
): Promise<GuardAnswer | null> {
  const records: Outcome[] = reporter.pending().slice(-MAX_CHECK_RECORDS);
  const body = Object.fromEntries(Object.entries(question).filter(([, v]) => v !== undefined));
  const r = await callApi(endpoint, 'POST', '/api/v1/guards/check', {
    body: records.length ? { ...body, records } : body,
    signal,
  });
  if (r.kind !== 'response' || r.status !== 200) return null;
  const answer = r.body as GuardAnswer | null;
  return answer && typeof answer === 'object' && typeof answer.decision === 'string' ? answer : null;
}
