// Resolving an unknown (docs/design.md "Resolving an unknown", docs/api.md `resolution` and
// `POST /api/v1/outcomes/{id}/state-check`): what settled it, the state check's body, and the
// next step a settled record shows instead of its classification's. Pure.
import { z } from 'zod';
import { boundedString } from './schemas';

export const stateVerdicts = ['happened', 'did_not_happen'] as const;
export type StateVerdict = (typeof stateVerdicts)[number];

export const STATE_CHECK_NOTE_MAX = 500;

/** What settled an unknown: a later record of the same operation, or a state check. */
export type Resolution = {
  by: 'record' | 'state_check';
  verdict: StateVerdict;
  /** The settling record (by = record). */
  recordId?: string;
  at: Date;
  /** Who: the person or API key that checked, or the agent (else principal) of the settling record. */
  who?: string;
  /** The state check's note (masked). */
  note?: string;
};

export const stateCheckBodySchema = z.strictObject({
  verdict: z.enum(stateVerdicts).meta({ description: 'What the state showed: the write took effect, or not.' }),
  note: boundedString(STATE_CHECK_NOTE_MAX)
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .meta({ description: 'What was checked, and where; masked for secrets and personal data.' }),
});
export type StateCheckBody = z.output<typeof stateCheckBodySchema>;

export const verdictLabel: Record<StateVerdict, string> = {
  happened: 'it happened',
  did_not_happen: 'it did not happen',
};

/** "by a later record (support-bot)" / "by a state check (Ana, ana@example.com)". */
export function resolvedHow(r: Resolution): string {
  const whom = r.who ? ` (${r.who})` : '';
  return r.by === 'record' ? `by a later record${whom}` : `by a state check${whom}`;
}

/** The next step of a settled record: never "retry" what is already settled. */
export function resolvedNextStep(r: Resolution): string {
  const what =
    r.by === 'record'
      ? `A later attempt of the same operation (record ${r.recordId}) ${r.verdict === 'happened' ? 'completed' : 'was refused'}`
      : `A state check${r.who ? ` by ${r.who}` : ''} found that ${verdictLabel[r.verdict]}`;
  if (r.verdict === 'happened') return `${what}: the write took effect. Do not call it again.`;
  return r.by === 'record'
    ? `${what}: this call did not take effect. Follow that record's next step, not this one's.`
    : `${what}: the write did not take effect. Repeating it with the same idempotency key and arguments is safe.`;
}
