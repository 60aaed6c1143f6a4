// The one shape every server action answers with, for forms (useActionState) and buttons alike.

export type ActionState<T = undefined> =
  | { status: 'idle' }
  | { status: 'ok'; value: T; at: number }
  | {
      status: 'error';
      message: string;
      /** A message per field at fault. */
      fields?: Record<string, string>;
      /** What was typed, for a form to show again (React resets a form after every action). */
      input?: Record<string, string>;
      at: number;
    };

export const idle: ActionState<never> = { status: 'idle' };

/**
 * The one line a button shows next to itself after an action: null when it went well; the
 * action's message, or with `fieldLabel` the first field's message (prefixed by the label, if any).
 */
export function actionError(state: ActionState<unknown>, fieldLabel?: string): string | null {
  if (state.status !== 'error') return null;
  const field = fieldLabel === undefined ? undefined : Object.values(state.fields ?? {})[0];
  if (field === undefined) return state.message;
  return fieldLabel ? `${fieldLabel} ${field}` : field;
}
