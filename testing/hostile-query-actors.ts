// Shared setup of the hostile query and path tests (app/api/v1/hostile-queries.test.ts,
// hostile-paths.test.ts): credentials, a pending approval and a live grant.
import { type Actors, makeActors, newApproval, newGrant } from '@/testing/api-bodies';

export let actors: Actors;
export let pending = '';
export let grant = '';

export async function setUpQueryActors() {
  actors = await makeActors();
  pending = (await newApproval(actors)).id;
  grant = await newGrant(actors);
}
