'use server';
import { done, runAction } from '@/lib/server/http/action';
import { trustServer, untrustServer } from '@/lib/server/policy/trusted-servers';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';
import { revalidateServers } from './revalidate';

/** Trusts a server, from the servers page's form or the inventory's button. */
export async function trustServerAction(name: string) {
  const state = await runAction(trustServerSchema, { name }, (actor, d) => trustServer(actor, d.name));
  revalidateServers();
  return state.status === 'ok' ? { ...state, value: { name: state.value.name } } : state;
}

export async function untrustServerAction(name: string) {
  const state = await runAction(trustServerSchema, { name }, (actor, d) => untrustServer(actor, d.name));
  revalidateServers();
  return done(state);
}
