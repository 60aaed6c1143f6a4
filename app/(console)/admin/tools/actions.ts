'use server';
import { done, runAction } from '@/lib/server/http/action';
import { requirementSchema, setApprovalRequirement } from '@/lib/server/tools/tools';
import { revalidateServers } from '../servers/revalidate';

/** A tool's requirement, or with `tool` null the whole server's: default, 0, 1 or 2 approvals. */
export async function setRequirementAction(server: string, tool: string | null, requirement: string) {
  const state = await runAction(requirementSchema, { server, tool, requirement }, (actor, d) =>
    setApprovalRequirement(actor, d),
  );
  revalidateServers();
  return done(state);
}
