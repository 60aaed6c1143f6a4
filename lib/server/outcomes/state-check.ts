import 'server-only';
import { db } from '../db/db';
import { appendAudit } from '../audit/audit';
import { first, rows as run } from '../db/kysely';
import { claimByStateCheck } from './resolution-sql';
import { selectSettlers } from './sql';
import { authorize } from '@/lib/auth/permissions';
import { auditName, organizationOf, type Actor } from '@/lib/auth/actor';
import { isUuid } from '@/lib/outcomes/query';
import { resolvedHow, verdictLabel, type StateCheckBody } from '@/lib/outcomes/resolution';
import { mask } from '@/lib/redaction/mask';
import { fail, ok, type Result } from '@/lib/result';
import { getOutcomeForWriter, type OutcomeView } from './read';

const who = (actor: Actor): string => {
  switch (actor.kind) {
    case 'apiKey':
      return `API key ${actor.name}`;
    case 'system':
      return actor.name;
    default:
      return actor.name && actor.name !== actor.email ? `${actor.name}, ${actor.email}` : actor.email;
  }
};

/**
 * A state check (docs/api.md `POST /api/v1/outcomes/{id}/state-check`): resolves an unresolved unknown
 * with a verdict and a note, audited as `outcome.state_check`, in one transaction. A conditional
 * update decides races: of two at once one wins, the other gets a conflict naming the first.
 * Another organization's record (for an organization-limited key) is as absent as a missing one.
 */
export async function recordStateCheck(actor: Actor, id: string, body: StateCheckBody): Promise<Result<OutcomeView>> {
  if (!authorize(actor, 'outcomes.state_check')) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const organization = organizationOf(actor);
  const note = mask(body.note.trim());
  const checker = who(actor);
  const claimed = await db.$transaction(
    async (tx) => {
      const row = await first(claimByStateCheck(id, organization, body.verdict), tx);
      if (!row) return false;
      await tx.outcomeStateCheck.create({
        data: {
          recordId: id,
          organization: row.organization,
          verdict: body.verdict,
          note,
          actor: auditName(actor),
          who: checker,
        },
      });
      await appendAudit(tx, {
        actor: auditName(actor),
        action: 'outcome.state_check',
        targetType: 'outcome',
        targetId: id,
        data: { verdict: body.verdict, note, organization: row.organization },
      });
      return true;
    },
    { maxWait: 10_000, timeout: 20_000 },
  );
  if (claimed) return ok((await getOutcomeForWriter(id, organization))!);
  return explainRefused(id, organization);
}

/** Why a state check changed nothing: not there, not unknown, or settled already (by what, whom, when). */
async function explainRefused(id: string, organization: string | null): Promise<Result<never>> {
  const r = await db.outcomeRecord.findFirst({
    where: { id, ...(organization === null ? {} : { organization }) },
    select: {
      delivery: true,
      category: true,
      resolvedAt: true,
      resolutionBy: true,
      resolutionVerdict: true,
      resolvedByRecordId: true,
    },
  });
  if (!r) return fail('not_found');
  if (r.delivery !== 'unknown')
    return fail(
      'conflict',
      `This record is not unknown: it was classified ${r.delivery} (${r.category.replaceAll('_', ' ')}), so there is no state to check.`,
    );
  if (!r.resolvedAt || !r.resolutionBy || !r.resolutionVerdict)
    return fail('conflict', 'This record changed while the state check was recorded; reload and check again.');
  let whom: string | undefined =
    r.resolutionBy === 'state_check'
      ? (await db.outcomeStateCheck.findUnique({ where: { recordId: id }, select: { who: true } }))?.who
      : undefined;
  if (r.resolutionBy === 'record' && r.resolvedByRecordId) {
    const [settler] = await run(selectSettlers([r.resolvedByRecordId]));
    whom = settler ? (settler.agent ?? settler.principal) : undefined;
  }
  const how = resolvedHow({ by: r.resolutionBy, verdict: r.resolutionVerdict, at: r.resolvedAt, who: whom });
  const which = r.resolutionBy === 'record' ? ` (record ${r.resolvedByRecordId})` : '';
  return fail(
    'conflict',
    `Already resolved ${how}${which} at ${r.resolvedAt.toISOString()}: ${verdictLabel[r.resolutionVerdict]}.`,
  );
}
