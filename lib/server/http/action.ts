import 'server-only';
import type { z } from 'zod';
import { isDatabaseUnavailable } from '../db/unavailable';
import { noteOwnWrite } from '../db/replica';
import { getViewer } from '../auth/session';
import { takeRequestShared } from '../rate-limit/rate-limit';
import type { Person } from '@/lib/auth/actor';
import { fieldErrors, type Failure, type Result } from '@/lib/result';
import type { ActionState } from '@/lib/action-state';

export type { ActionState } from '@/lib/action-state';

const messages: Partial<Record<Failure, string>> = {
  unauthenticated: 'Your session has ended. Sign in again.',
  forbidden: 'Your role cannot do this.',
  not_found: 'That record no longer exists.',
  conflict: 'Someone changed this in the meantime. Reload and try again.',
  invalid_input: 'Some fields need attention.',
  unavailable: 'The console cannot reach its database right now. Try again in a moment.',
};

/** The one path of every server action: parse with the shared schema, get the person acting, call data access. */
export async function runAction<S extends z.ZodType, T>(
  schema: S,
  input: unknown,
  run: (actor: Person, data: z.infer<S>) => Promise<Result<T>>,
): Promise<ActionState<T>> {
  const at = Date.now();
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const fields = Object.fromEntries(fieldErrors(parsed.error.issues).map((e) => [e.path, e.message]));
    return { status: 'error', message: messages.invalid_input!, fields, at };
  }
  let result: Result<T>;
  try {
    const viewer = await getViewer();
    if (!viewer) return { status: 'error', message: messages.unauthenticated!, at };
    // The same per-person budget as the API: a script clicking through the console counts too.
    const take = await takeRequestShared({ kind: 'user', userId: viewer.userId });
    if (!take.allowed)
      return { status: 'error', message: `Too many requests; wait ${take.retryAfterSeconds} s and try again.`, at };
    result = await run(viewer, parsed.data);
  } catch (err) {
    // The form stays as it was, with a message, instead of the page's error screen.
    if (isDatabaseUnavailable(err)) return { status: 'error', message: messages.unavailable!, at };
    throw err;
  }
  if (result.ok) {
    // A change succeeded: this person's next reads come from the primary (read-your-writes).
    await noteOwnWrite();
    return { status: 'ok', value: result.value, at };
  }
  const fields = result.errors ? Object.fromEntries(result.errors.map((e) => [e.path, e.message])) : undefined;
  return { status: 'error', message: result.detail ?? messages[result.failure] ?? 'That did not work.', fields, at };
}

/** The state without its value, for an action whose caller needs to know only that it went well. */
export const done = <T>(state: ActionState<T>): ActionState =>
  state.status === 'ok' ? { status: 'ok', value: undefined, at: state.at } : state;
