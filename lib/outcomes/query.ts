// The list query for outcome records (docs/api.md, `GET /api/v1/outcomes`): one schema for the API's
// query string and the console's search params. Pure.
import { z } from 'zod';
import { cursorCodec, cursorId, cursorInstant } from '@/lib/pagination/cursor';
import { boundaries, boundedString, categories, deliveries, instantSchema, retryValues } from './schemas';

export const OUTCOME_PAGE_DEFAULT = 50;
export const OUTCOME_PAGE_MAX = 200;

/** Where the previous page stopped: newest first, by occurredAt, then id. */
export type OutcomeCursor = { occurredAt: Date; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (s: string) => UUID.test(s);

// Opaque to callers (lib/pagination/cursor.ts), so the ordering can change without breaking them.
const outcomeCursor = cursorCodec(
  z.tuple([cursorInstant, cursorId]).transform(([occurredAt, id]): OutcomeCursor => ({ occurredAt, id })),
  (c) => [c.occurredAt.toISOString(), c.id],
);
export const encodeOutcomeCursor = outcomeCursor.encode;
export const decodeOutcomeCursor = outcomeCursor.decode;

// An empty parameter (a form's blank field, `?delivery=`) means "no filter", not a bad value.
const param = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const name = boundedString(200);
const instant = instantSchema.transform((s) => new Date(s));

// Strict: a misspelt filter (`?reqRef=`) would otherwise silently list everything.
export const outcomeQuerySchema = z
  .strictObject({
    requestRef: param(boundedString(200)),
    idempotencyKey: param(boundedString(255)),
    grantId: param(name),
    delivery: param(z.enum(deliveries)),
    category: param(z.enum(categories)),
    boundary: param(z.enum(boundaries)),
    retry: param(z.enum(retryValues)),
    // "Unknown writes" are `delivery=unknown&readOnly=false`: read-only as classified (trusted hint).
    readOnly: param(z.enum(['true', 'false']).transform((v) => v === 'true')),
    // Unknown records that something settled, or not yet (docs/design.md "Resolving an unknown"):
    // implies delivery=unknown; with readOnly=false, the unknown writes.
    resolution: param(z.enum(['resolved', 'unresolved'])),
    tool: param(name),
    server: param(name),
    organization: param(name),
    principal: param(name),
    // occurredAt >= from and < to: consecutive windows neither overlap nor leave gaps.
    from: param(instant),
    to: param(instant),
    // Newest first unless asked; a cursor continues in the order it was made in (keep `order` with it).
    order: param(z.enum(['newest', 'oldest'])),
    cursor: param(outcomeCursor.param(200)),
    limit: param(z.coerce.number().int().min(1).max(OUTCOME_PAGE_MAX)),
  })
  .refine((q) => !q.from || !q.to || q.from < q.to, { path: ['to'], message: 'must be after from' });

export type OutcomeQuery = z.output<typeof outcomeQuerySchema>;
