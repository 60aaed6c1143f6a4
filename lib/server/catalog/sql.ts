import 'server-only';
import { sql } from '../db/kysely';

// The tool catalog's statements (docs/catalog.md "Pinning"). Lists go as one JSON parameter: the
// statements may run on Prisma's transaction, which passes arrays differently from pg.

/** The state of a server's tools, named ones only (`names`) or all of them (null). */
export type DefinitionState = { tool_name: string; accepted_hash: string | null; held_hash: string | null };
export const selectDefinitionStates = (server: string, names: readonly string[]) => sql<DefinitionState>`
  SELECT t.tool_name, t.accepted_hash, t.held_hash FROM tool_definitions t
  WHERE t.server = ${server} AND t.tool_name IN (SELECT jsonb_array_elements_text(${JSON.stringify(names)}::jsonb))`;

export type PinnedRow = {
  tool_name: string;
  accepted_hash: string | null;
  accepted: unknown;
  held_hash: string | null;
  inserted: boolean;
};

/**
 * Writes what was seen of each tool, `{ name, hash, def }`: a tool first seen is accepted (held
 * instead when the server holds new tools); a definition neither accepted nor already held becomes
 * the held one. One statement, rows taken in name order (so two callers lock them in the same
 * order); ON CONFLICT makes a race on a first sighting or a change one row, written once: the
 * loser's update finds the definition already there and returns nothing.
 */
export const upsertDefinitions = (server: string, seen: readonly { name: string; hash: string; def: unknown }[]) =>
  sql<PinnedRow>`
  WITH input AS (
    SELECT x.name, x.hash, x.def FROM jsonb_to_recordset(${JSON.stringify(seen)}::jsonb) AS x(name text, hash text, def jsonb)
  ), setting AS (
    SELECT coalesce((SELECT c.hold_new_tools FROM catalog_servers c WHERE c.name = ${server}), false) AS hold_new
  )
  INSERT INTO tool_definitions AS t (server, tool_name, accepted_hash, accepted, accepted_at, held_hash, held, held_since)
  SELECT ${server}, i.name,
         CASE WHEN s.hold_new THEN NULL ELSE i.hash END, CASE WHEN s.hold_new THEN NULL ELSE i.def END,
         CASE WHEN s.hold_new THEN NULL ELSE now() END,
         CASE WHEN s.hold_new THEN i.hash END, CASE WHEN s.hold_new THEN i.def END, CASE WHEN s.hold_new THEN now() END
  FROM input i CROSS JOIN setting s
  ORDER BY i.name
  ON CONFLICT (server, tool_name) DO UPDATE SET
    held_hash = coalesce(EXCLUDED.accepted_hash, EXCLUDED.held_hash),
    held = coalesce(EXCLUDED.accepted, EXCLUDED.held),
    held_since = now()
  WHERE t.accepted_hash IS DISTINCT FROM coalesce(EXCLUDED.accepted_hash, EXCLUDED.held_hash)
    AND t.held_hash IS DISTINCT FROM coalesce(EXCLUDED.accepted_hash, EXCLUDED.held_hash)
  RETURNING t.tool_name, t.accepted_hash, t.accepted, t.held_hash, (t.xmax = 0) AS inserted`;

/** The server went back to the accepted definition: the change held is no longer offered. */
export const withdrawHeld = (server: string, seen: readonly { name: string; hash: string }[]) => sql<{
  tool_name: string;
  held_hash: string;
}>`
  WITH input AS (
    SELECT x.name, x.hash FROM jsonb_to_recordset(${JSON.stringify(seen)}::jsonb) AS x(name text, hash text)
  ), gone AS (
    SELECT t.server, t.tool_name, t.held_hash FROM tool_definitions t JOIN input i ON i.name = t.tool_name
    WHERE t.server = ${server} AND t.accepted_hash = i.hash AND t.held_hash IS NOT NULL
    ORDER BY t.tool_name FOR UPDATE OF t
  )
  UPDATE tool_definitions t SET held_hash = NULL, held = NULL, held_since = NULL
  FROM gone g WHERE t.server = g.server AND t.tool_name = g.tool_name AND t.accepted_hash IS NOT NULL
  RETURNING t.tool_name, g.held_hash`;

/** One `tool.changed` event per entry (webhook_enqueue_data): identifiers and hashes only. */
export const enqueueToolChanged = (events: readonly Record<string, unknown>[]) => sql<{ n: number }>`
  SELECT count(webhook_enqueue_data('tool.changed', e.item) ORDER BY e.ord)::int AS n
  FROM jsonb_array_elements(${JSON.stringify(events)}::jsonb) WITH ORDINALITY AS e(item, ord)`;

/** Makes the held definition the accepted one, if it is still the one with that hash. */
export const acceptHeldDefinition = (server: string, tool: string, hash: string, by: string) => sql<{
  accepted_at: Date;
}>`
  UPDATE tool_definitions t
  SET accepted_hash = t.held_hash, accepted = t.held, accepted_at = now(), accepted_by = ${by},
      held_hash = NULL, held = NULL, held_since = NULL
  WHERE t.server = ${server} AND t.tool_name = ${tool} AND t.held_hash = ${hash}
  RETURNING t.accepted_at`;

/** Servers with tools in the catalog, with how many are held. */
export type CatalogServerRow = { server: string; tools: number; held: number };
export const selectCatalogServers = (limit: number) => sql<CatalogServerRow>`
  SELECT t.server, count(*)::int AS tools, count(t.held_hash)::int AS held
  FROM tool_definitions t GROUP BY t.server ORDER BY t.server LIMIT ${limit}::int`;
