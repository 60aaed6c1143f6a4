import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from '../db/kysely';

// Every machine request starts here, so it is one statement on the pool (no ORM round trip):
// find the live key and, at most once per `touchAfterSeconds`, note that it was used.
/** The live API key with this secret's hash. */
export const authenticateApiKey = (keyHash: string, touchAfterSeconds: number) => sql<
  Pick<Selectable<DB['api_keys']>, 'id' | 'name' | 'scopes' | 'organization'>
>`
  WITH k AS (SELECT id, name, scopes, organization, last_used_at FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL),
  touched AS (
    UPDATE api_keys a SET last_used_at = now() FROM k
    WHERE a.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${touchAfterSeconds}))
  )
  SELECT id, name, scopes, organization FROM k`;
