'use server';
import { revalidatePath } from 'next/cache';
import { done, runAction } from '@/lib/server/http/action';
import { changeUserRole, createUser, setUserDisabled } from '@/lib/server/users/users';
import { changeRoleSchema, createUserSchema, setDisabledSchema } from '@/lib/users/schemas';
import { endUserSessions } from '@/lib/server/users/sessions';
import { endUserSessionsSchema } from '@/lib/identity/schemas';

const blankToUndefined = (v: FormDataEntryValue | null) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

export async function createUserAction(_prev: unknown, form: FormData) {
  const input = {
    email: form.get('email'),
    name: blankToUndefined(form.get('name')),
    role: form.get('role'),
    password: form.get('password'),
    principalId: blankToUndefined(form.get('principalId')),
  };
  const state = await runAction(createUserSchema, input, (viewer, data) => createUser(viewer, data));
  if (state.status === 'ok') revalidatePath('/admin/users');
  return state.status === 'ok' ? { ...state, value: { email: state.value.email } } : state;
}

export async function changeRoleAction(userId: string, role: string) {
  const state = await runAction(changeRoleSchema, { userId, role }, (viewer, d) =>
    changeUserRole(viewer, d.userId, d.role),
  );
  revalidatePath('/admin/users');
  return done(state);
}

export async function setDisabledAction(userId: string, disabled: boolean) {
  const state = await runAction(setDisabledSchema, { userId, disabled }, (viewer, d) =>
    setUserDisabled(viewer, d.userId, d.disabled),
  );
  revalidatePath('/admin/users');
  return done(state);
}

export async function endUserSessionsAction(userId: string) {
  const state = await runAction(endUserSessionsSchema, { userId }, (viewer, d) => endUserSessions(viewer, d.userId));
  revalidatePath('/admin/users');
  return done(state);
}
