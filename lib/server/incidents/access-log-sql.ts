import 'server-only';
import type { Insertable } from 'kysely';
import { kysely, type DB } from '../db/kysely';

/** One row of the incident access log (run on logPool: no wait for the disk). */
export const insertIncidentAccess = (row: Insertable<DB['incident_access_log']>) =>
  kysely.insertInto('incident_access_log').values(row);
