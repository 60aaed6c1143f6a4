import 'server-only';
import { replicaSafe } from '../db/replica';
import { db } from '../db/db';
import { rows as run } from '../db/kysely';
import { selectTaskRecords } from './sql';
import type { Prisma } from '@/lib/generated/prisma/client';
import type { Actor } from '@/lib/auth/actor';
import {
  encodeOutcomeCursor,
  isUuid,
  OUTCOME_PAGE_DEFAULT,
  OUTCOME_PAGE_MAX,
  type OutcomeQuery,
} from '@/lib/outcomes/query';
import type { Category, Delivery, Observed, TaskStatus } from '@/lib/outcomes/schemas';
import { keysetPage, keysetQuery, pageSize } from '@/lib/pagination/keyset';
import { fail, ok, type Result } from '@/lib/result';
import {
  readableOrganization,
  readScope,
  settlersOf,
  toView,
  viewSelect,
  withStateChecks,
  type OutcomeView,
} from './view';

export type { OutcomeView } from './view';

export type OutcomePage = { items: OutcomeView[]; nextCursor: string | null };

/** Newest first (occurredAt, then id; `order: 'oldest'` reverses both), a page at a time. */
export const listOutcomes = replicaSafe(async function listOutcomes(
  reader: Actor,
  query: Partial<OutcomeQuery> = {},
): Promise<Result<OutcomePage>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  const limit = pageSize(query.limit, OUTCOME_PAGE_DEFAULT, OUTCOME_PAGE_MAX);
  const { cursor } = query;
  const page = keysetQuery(
    'occurredAt',
    query.order === 'oldest' ? 'asc' : 'desc',
    cursor && { at: cursor.occurredAt, id: cursor.id },
    limit,
  );
  const where: Prisma.OutcomeRecordWhereInput = {
    AND: [
      scope,
      {
        requestRef: query.requestRef,
        idempotencyKey: query.idempotencyKey,
        grantId: query.grantId,
        delivery: query.delivery,
        category: query.category,
        boundary: query.boundary,
        retry: query.retry,
        readOnly: query.readOnly,
        toolName: query.tool,
        server: query.server,
        organization: query.organization,
        principal: query.principal,
        occurredAt: { gte: query.from, lt: query.to },
      },
      query.resolution === undefined
        ? {}
        : { delivery: 'unknown', resolvedAt: query.resolution === 'resolved' ? { not: null } : null },
      page.where,
    ],
  };
  const rows = await withStateChecks(
    await db.outcomeRecord.findMany({
      where,
      orderBy: page.orderBy,
      take: page.take,
      select: viewSelect,
    }),
  );
  const settlers = await settlersOf(rows);
  return ok(
    keysetPage(
      rows,
      limit,
      (last) => encodeOutcomeCursor({ occurredAt: last.occurredAt, id: last.id }),
      (r) => toView(r, settlers),
    ),
  );
});

/** One record; another organization's record is as absent as one that never existed. */
export const getOutcome = replicaSafe(async function getOutcome(
  reader: Actor,
  id: string,
): Promise<Result<OutcomeView>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const found = await db.outcomeRecord.findFirst({ where: { AND: [scope, { id }] }, select: viewSelect });
  if (!found) return fail('not_found');
  const [row] = await withStateChecks([found]);
  return ok(toView(row, await settlersOf([row])));
});

/**
 * One record for whoever just changed it (the state check's answer: an outcomes:write key may
 * not read the list, but gets back the record it resolved), within its organization (null: any).
 */
export async function getOutcomeForWriter(id: string, organization: string | null): Promise<OutcomeView | null> {
  const found = await db.outcomeRecord.findFirst({
    where: { id, ...(organization === null ? {} : { organization }) },
    select: viewSelect,
  });
  if (!found) return null;
  const [row] = await withStateChecks([found]);
  return toView(row, await settlersOf([row]));
}

/** One record of an MCP task, as its history shows it. */
export type TaskRecordView = {
  id: string;
  occurredAt: Date;
  status: TaskStatus | null;
  expired: boolean;
  delivery: Delivery;
  category: Category;
  readOnly: boolean;
  classifierVersion: number;
};

/**
 * Every record of one MCP task (same organization, same `observed.task.id`), oldest first: the
 * task's status history. The last one is its current status. Another organization's task ids
 * are not looked at, even by a reader who may see every organization.
 */
export const listTaskRecords = replicaSafe(async function listTaskRecords(
  reader: Actor,
  organization: string,
  taskId: string,
  max: number = 200,
): Promise<Result<TaskRecordView[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  if (scope.organization !== null && scope.organization !== organization) return ok([]);
  const rows = await run(selectTaskRecords(organization, taskId, max));
  return ok(
    rows.map((r) => {
      const task = (r.observed as Observed | null)?.task;
      return {
        id: r.id,
        occurredAt: r.occurredAt,
        status: task?.status ?? null,
        expired: task?.expired === true,
        delivery: r.delivery,
        category: r.category,
        readOnly: r.readOnly,
        classifierVersion: r.classifierVersion,
      };
    }),
  );
});
