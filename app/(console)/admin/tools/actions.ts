'use server';
import { revalidatePath } from 'next/cache';
import { runAction } from '@/lib/server/http/action';
import { trustServer, untrustServer } from '@/lib/server/data/trusted-servers';
import { requirementSchema, setApprovalRequirement } from '@/lib/server/data/tools';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';

// Trust and policy show on three pages: each change refreshes all of them.
function revalidateInventory() {
  revalidatePath('/admin/tools');
  revalidatePath('/admin/policy');
  revalidatePath('/admin/servers');
}

/** A tool's requirement, or with `tool` null the whole server's: default, 0, 1 or 2 approvals. */
export async function setRequirementAction(server: string, tool: string | null, requirement: string) {
  const state = await runAction(requirementSchema, { server, tool, requirement }, (viewer, d) =>
    setApprovalRequirement(viewer, d),
  );
  revalidateInventory();
  return state.status === 'error' ? (Object.values(state.fields ?? {})[0] ?? state.message) : null;
}

export async function trustServerAction(name: string) {
  const state = await runAction(trustServerSchema, { name }, (viewer, d) => trustServer(viewer, d.name));
  revalidateInventory();
  return state.status === 'error' ? (state.fields?.name ? `Server name ${state.fields.name}` : state.message) : null;
}

export async function untrustServerAction(name: string) {
  const state = await runAction(trustServerSchema, { name }, (viewer, d) => untrustServer(viewer, d.name));
  revalidateInventory();
  return state.status === 'error' ? state.message : null;
}
