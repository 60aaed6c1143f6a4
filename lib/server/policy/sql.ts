import 'server-only';
import { kysely } from '../db/kysely';

/** Locks the rule of (server, tool) until commit, so two admins changing it at once serialize. */
export const lockPolicyRule = (server: string, toolName: string) =>
  kysely
    .selectFrom('policy_rules')
    .select(['id', 'required_approvals', 'blocked'])
    .where('server', '=', server)
    .where('tool_name', '=', toolName)
    .forUpdate();
