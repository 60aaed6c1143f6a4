import 'server-only';
import { kysely, sql } from '../db/kysely';

/** Locks the rule of (server, tool) until commit, so two admins changing it at once serialize. */
export const lockPolicyRule = (server: string, toolName: string) =>
  kysely
    .selectFrom('policy_rules')
    .select([
      'id',
      'required_approvals',
      'blocked',
      'show_fields',
      'failed_attempts_budget',
      'call_budget',
      'backoff_base_ms',
    ])
    .where('server', '=', server)
    .where('tool_name', '=', toolName)
    .forUpdate();

/**
 * The argument fields a rule's queue rows show; null (not an empty list) when the queue shows the
 * first scalar fields, which Prisma cannot write to a list column. One parameter per field: the
 * statement may run on Prisma, which passes arrays differently from pg.
 */
export const setShowFields = (id: string, fields: readonly string[] | null) =>
  kysely
    .updateTable('policy_rules')
    .set({
      show_fields: fields ? sql<string[]>`ARRAY[${sql.join(fields.map((f) => sql`${f}::text`))}]` : sql<string[]>`NULL`,
    })
    .where('id', '=', id);
