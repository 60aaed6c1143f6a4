'use server';
import { revalidatePath } from 'next/cache';
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { decisionSchema, revokeSchema } from '@/lib/approvals/schemas';
import { runAction } from '@/lib/server/http/action';
import { decideApproval, getApproval, revokeApproval } from '@/lib/server/approvals';
import { explainLostDecision } from '@/lib/approvals/present';
import type { ApprovalStatus } from '@/lib/approvals/schemas';
import type { Person } from '@/lib/auth/actor';
import type { ActionState } from '@/lib/action-state';
import type { Failure } from '@/lib/result';
import { formatDate } from '@/lib/format';

const decideInput = decisionSchema.extend({ id: z.uuid() });
const revokeInput = revokeSchema.extend({ id: z.uuid() });

/** The request as it is after the attempt: the form decides again from this version while it is pending. */
export type DecideState = ActionState<never> & { current?: { status: ApprovalStatus; version: number } };

/**
 * A reviewer's decision from the console. On a lost race the answer explains in plain words who
 * decided what, and carries the request's current version and status, so the form keeps the typed
 * reason and can decide again when the request still waits.
 */
export async function decideApprovalAction(_prev: unknown, form: FormData): Promise<DecideState> {
  const input = {
    id: form.get('id'),
    decision: form.get('decision'),
    reason: form.get('reason'),
    version: form.get('version'),
  };
  let viewer: Person | null = null;
  let failure: Failure | null = null;
  const state = await runAction(decideInput, input, async (who, data) => {
    viewer = who;
    const result = await decideApproval(who, data);
    if (!result.ok) failure = result.failure;
    return result;
  });
  const person = viewer as Person | null;
  if (!person || typeof input.id !== 'string') return state.status === 'ok' ? { status: 'idle' } : state;
  const now = await getApproval(person, input.id);
  const current = now.ok ? { status: now.value.status, version: now.value.version } : undefined;
  if (state.status !== 'ok') {
    if (state.status !== 'error' || failure !== 'conflict' || !now.ok) return { ...state, current };
    return { ...state, message: explainLostDecision(now.value, person.email, formatDate), current };
  }
  revalidatePath('/approvals');
  revalidatePath(`/approvals/${input.id}`);
  // The page then confirms what happened and sets the badge: the form is gone once the request settles.
  redirect(`/approvals/${input.id}?done=${input.decision === 'deny' ? 'deny' : 'approve'}`);
}

export async function revokeApprovalAction(_prev: unknown, form: FormData) {
  const input = { id: form.get('id'), reason: form.get('reason') };
  const state = await runAction(revokeInput, input, (viewer, data) => revokeApproval(viewer, data));
  revalidatePath('/approvals');
  revalidatePath('/admin/authorizations');
  revalidatePath(`/approvals/${String(input.id)}`);
  return state.status === 'ok' ? { ...state, value: { status: state.value.status } } : state;
}
