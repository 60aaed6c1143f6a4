// Shared by the tests of lib/outcomes/classify.ts: observations in short, the four fields a row of
// docs/design.md's table gives, and the two ways a tool is classified (a write, a trusted read).
import { classifyOutcome } from '@/lib/outcomes/classify';
import type { Classification, Observed } from '@/lib/outcomes/schemas';

export type Expected = Pick<Classification, 'boundary' | 'delivery' | 'category' | 'retry'>;

export const sent = (more: Partial<Observed> = {}): Observed => ({ sent: true, ...more });
export const toolError = (errorCategory: string | null = null): Partial<Observed> => ({
  httpStatus: 200,
  result: { isError: true, errorCategory },
});
export const e = (
  boundary: Expected['boundary'],
  delivery: Expected['delivery'],
  category: Expected['category'],
  retry: Expected['retry'],
): Expected => ({ boundary, delivery, category, retry });

export const WRITE = { annotations: { readOnlyHint: false }, serverTrusted: true };
export const TRUSTED_READ = { annotations: { readOnlyHint: true }, serverTrusted: true };

export function classifyAs(observed: Observed, as: typeof WRITE): Expected {
  const { boundary, delivery, category, retry } = classifyOutcome({ observed, ...as });
  return { boundary, delivery, category, retry };
}
