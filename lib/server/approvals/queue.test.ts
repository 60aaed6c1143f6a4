// The reviewer's queues (needs my decision / waiting on others) and the badge's count, against
// real PostgreSQL. This file has its own database (testing/vitest-setup.ts): counts are exact.
import { beforeAll, describe, expect, it } from 'vitest';
import { countPendingApprovals, decideApproval, listApprovals } from '.';
import { makeUser, uniq } from '@/testing/factories';
import { approvalListQuerySchema } from '@/lib/approvals/schemas';
import type { Viewer } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { approve, makeApproval, requester, setUpApprovalActors, sleep, TWO, value } from '@/testing/approvals-fixtures';

let rui: Viewer;
let rita: Viewer;
let sam: Viewer;
const org = uniq('org');
const ids: Record<string, string> = {};

beforeAll(async () => {
  await setUpApprovalActors();
  rui = await makeUser('reviewer', { principalId: 'user_rui' });
  rita = await makeUser('reviewer', { principalId: 'user_rita' });
  sam = await makeUser('support', { principalId: 'user_sam' });
  // The table of cases; what each person's queue must hold is written out below.
  ids.other = (await makeApproval({ organization: org, principal: 'user_193', summary: 'other' })).id;
  ids.ruisOwn = (await makeApproval({ organization: org, principal: 'user_rui', summary: 'ruis own' })).id;
  ids.twoRuiApproved = (await makeApproval({ ...TWO, organization: org, principal: 'user_193', summary: 'two' })).id;
  value(await approve(rui, ids.twoRuiApproved, 1));
  ids.denied = (await makeApproval({ organization: org, principal: 'user_193', summary: 'denied' })).id;
  value(await decideApproval(rita, { id: ids.denied, decision: 'deny', reason: 'no', version: 1 }));
  ids.expired = (await makeApproval({ organization: org, principal: 'user_193', pendingTtlSeconds: 1 })).id;
  await sleep(1100);
});

async function queue(actor: Actor, q: Record<string, string> = {}): Promise<string[]> {
  const query = approvalListQuerySchema.parse({ organization: org, ...q });
  const page = value(await listApprovals(actor, query));
  const name = Object.fromEntries(Object.entries(ids).map(([k, v]) => [v, k]));
  return page.items.map((a) => name[a.id]).sort();
}

describe('needs my decision', () => {
  it('leaves out the viewer’s own principal, what they approved, settled and expired requests', async () => {
    expect(await queue(rui, { queue: 'needs_my_decision' })).toEqual(['other']);
    expect(await queue(rita, { queue: 'needs_my_decision' })).toEqual(['other', 'ruisOwn', 'twoRuiApproved']);
  });

  it('is empty for support staff and API keys, who cannot decide', async () => {
    expect(await queue(sam, { queue: 'needs_my_decision' })).toEqual([]);
    expect(await queue(requester, { queue: 'needs_my_decision' })).toEqual([]);
  });
});

describe('waiting on others', () => {
  it('holds the pending requests the viewer may not decide now', async () => {
    expect(await queue(rui, { queue: 'waiting_on_others' })).toEqual(['ruisOwn', 'twoRuiApproved']);
    expect(await queue(rita, { queue: 'waiting_on_others' })).toEqual([]);
    expect(await queue(sam, { queue: 'waiting_on_others' })).toEqual(['other', 'ruisOwn', 'twoRuiApproved']);
  });

  it('the two queues together are the pending list', async () => {
    expect(await queue(rui, { status: 'pending' })).toEqual(['other', 'ruisOwn', 'twoRuiApproved']);
  });

  it('a queue with another status matches nothing', async () => {
    expect(await queue(rita, { queue: 'needs_my_decision', status: 'denied' })).toEqual([]);
    expect(await queue(rita, { status: 'denied' })).toEqual(['denied']);
  });
});

describe('the badge count', () => {
  it('counts exactly the needs-my-decision queue, and nothing for support staff or keys', async () => {
    expect(await countPendingApprovals(rui)).toBe(1);
    expect(await countPendingApprovals(rita)).toBe(3);
    expect(await countPendingApprovals(sam)).toBe(0);
    expect(await countPendingApprovals(requester)).toBe(0);
  });

  it('drops by one as soon as the viewer decides', async () => {
    const id = (await makeApproval({ organization: org, principal: 'user_193', summary: 'fresh' })).id;
    expect(await countPendingApprovals(rui)).toBe(2);
    value(await approve(rui, id, 1));
    expect(await countPendingApprovals(rui)).toBe(1);
  });
});
