'use server';
import { done, runAction } from '@/lib/server/http/action';
import { requirementSchema, setApprovalRequirement } from '@/lib/server/tools/tools';
import { acceptHeld, setHoldNewTools } from '@/lib/server/catalog/catalog';
import { acceptToolSchema } from '@/lib/catalog/schemas';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';
import { z } from 'zod';
import { revalidateServers } from '../servers/revalidate';

/** A tool's requirement, or with `tool` null the whole server's: default, 0, 1 or 2 approvals. */
export async function setRequirementAction(server: string, tool: string | null, requirement: string) {
  const state = await runAction(requirementSchema, { server, tool, requirement }, (actor, d) =>
    setApprovalRequirement(actor, d),
  );
  revalidateServers();
  return done(state);
}

/** Accepts the held definition the admin saw, by its hash: refused if another change came meanwhile. */
export async function acceptToolAction(server: string, tool: string, definitionHash: string) {
  const state = await runAction(acceptToolSchema, { server, tool, definitionHash }, (actor, d) => acceptHeld(actor, d));
  revalidateServers();
  return done(state);
}

const holdSchema = z.object({ name: trustServerSchema.shape.name, hold: z.boolean() });

/** Whether tools first seen on a server wait for an admin too. */
export async function setHoldNewToolsAction(name: string, hold: boolean) {
  const state = await runAction(holdSchema, { name, hold }, (actor, d) => setHoldNewTools(actor, d.name, d.hold));
  revalidateServers();
  return done(state);
}
