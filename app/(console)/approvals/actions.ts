'use server';
import { revalidatePath } from 'next/cache';
import { z } from 'zod';
import { decisionSchema, revokeSchema } from '@/lib/approvals/schemas';
import { runAction } from '@/lib/server/http/action';
import { decideApproval, revokeApproval } from '@/lib/server/data/approvals';

const decideInput = decisionSchema.extend({ id: z.uuid() });
const revokeInput = revokeSchema.extend({ id: z.uuid() });

export async function decideApprovalAction(_prev: unknown, form: FormData) {
  const input = {
    id: form.get('id'),
    decision: form.get('decision'),
    reason: form.get('reason'),
    version: form.get('version'),
  };
  const state = await runAction(decideInput, input, (viewer, data) => decideApproval(viewer, data));
  // On a conflict the page stays as the reviewer saw it, with the message naming who decided.
  if (state.status !== 'ok') return state;
  revalidatePath('/approvals');
  revalidatePath(`/approvals/${String(input.id)}`);
  return { ...state, value: { status: state.value.status } };
}

export async function revokeApprovalAction(_prev: unknown, form: FormData) {
  const input = { id: form.get('id'), reason: form.get('reason') };
  const state = await runAction(revokeInput, input, (viewer, data) => revokeApproval(viewer, data));
  revalidatePath('/approvals');
  revalidatePath('/admin/authorizations');
  revalidatePath(`/approvals/${String(input.id)}`);
  return state.status === 'ok' ? { ...state, value: { status: state.value.status } } : state;
}
