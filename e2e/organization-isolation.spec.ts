// An organization-limited API key against every /api/v1 route, through the real server: its own
// organization's data works; another organization's is as absent as data that never existed
// (reads and grant redemption: the very same 404), cannot be written (403 naming only the key's
// own organization), never shows up in lists, filters or incidents, and no answer, count or error
// text carries anything of it. People-only routes refuse every key alike, whatever it points at.
import { expect, test } from '@playwright/test';
import {
  stamp,
  ORG,
  SHARED_REF,
  seeded,
  unlimitedKey,
  adminToken,
  call,
  ok,
  setUpIsolation,
  expectNothingOf,
  type Row,
  redeemBody,
  run,
  normalize,
} from '../testing/isolation';
import { approvalRoutes } from './organization-isolation/approval-routes';
import { outcomeRoutes } from './organization-isolation/outcome-routes';

setUpIsolation();

// The matrix's rows, one per route, are in e2e/organization-isolation/.
const matrix: Row[] = [...outcomeRoutes, ...approvalRoutes];

test.describe('organization isolation: an organization-limited key on every route', () => {
  test('the routes under app/api/v1 are all in the matrix', async () => {
    const { readdirSync, readFileSync, statSync } = await import('node:fs');
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const path = `${dir}/${entry}`;
        if (statSync(path).isDirectory()) walk(path);
        else if (entry === 'route.ts') {
          const route = path
            .replace(/^app/, '')
            .replace(/\/route\.ts$/, '')
            .replace(/\[(\w+)\]/g, (_m, p: string) => (p === 'ref' ? '{ref}' : p === 'grantId' ? '{grantId}' : '{id}'));
          for (const m of readFileSync(path, 'utf8').matchAll(/export const (GET|POST|PUT|PATCH|DELETE)\b/g))
            found.push(`${m[1]} ${route}`);
        }
      }
    };
    walk('app/api/v1');
    const covered = new Set(matrix.map((r) => r.route.split(' (')[0].split('?')[0]));
    expect(found.filter((r) => !covered.has(r))).toEqual([]);
    expect(found.length).toBeGreaterThanOrEqual(13);
  });

  test('the data is really there: organization b sees its own, an unlimited key and a person see both', async () => {
    for (const secret of [unlimitedKey, adminToken]) {
      const list = await ok<{ items: { organization: string }[] }>(
        call(secret, 'GET', `/api/v1/outcomes?requestRef=${SHARED_REF}`),
      );
      expect(new Set(list.items.map((i) => i.organization))).toEqual(new Set([ORG.a, ORG.b]));
      const incident = await call(secret, 'GET', `/api/v1/incidents/${SHARED_REF}`);
      expect(incident.text).toContain(`Marker b ${stamp}`);
      expect(incident.text).toContain(`Marker a ${stamp}`);
    }
    expect((await call(seeded.b.key, 'GET', `/api/v1/outcomes/${seeded.b.outcomeId}`)).status).toBe(200);
    expect((await call(seeded.b.key, 'GET', `/api/v1/approvals/${seeded.b.approvalId}`)).status).toBe(200);
    expect((await call(seeded.b.key, 'GET', `/api/v1/incidents/${seeded.b.ref}`)).status).toBe(200);
  });

  for (const row of matrix) {
    test(row.route, async () => {
      const ownProbe = row.own();
      const otherProbe = row.other();
      const own = await run(ownProbe);
      expect(own.status, own.text).toBe(row.ownStatus);
      const other = await run(otherProbe);
      expect(other.status, other.text).toBe(row.otherStatus);
      expectNothingOf('b', own, JSON.stringify(ownProbe));
      expectNothingOf('b', other, JSON.stringify(otherProbe));
      if (row.absent) {
        const absentProbe = row.absent();
        const absent = await run(absentProbe);
        expect(absent.status).toBe(row.otherStatus);
        expect(normalize(other.text, otherProbe)).toBe(normalize(absent.text, absentProbe));
      }
      await row.check?.(own, other);
    });
  }

  test("after all that, organization b's grant is still unredeemed and its own key redeems it", async () => {
    const grant = await ok<{ grant: { redeemedAt: string | null } }>(
      call(seeded.b.key, 'GET', `/api/v1/approvals/${seeded.b.approvalId}`),
    );
    expect(grant.grant.redeemedAt).toBeNull();
    await ok(call(seeded.b.key, 'POST', `/api/v1/grants/${seeded.b.grantId}/redeem`, redeemBody));
    // and a's redemption of its own grant happened (the matrix row above), b's pending request is untouched
    const pending = await ok<{ status: string; decisions: unknown[] }>(
      call(seeded.b.key, 'GET', `/api/v1/approvals/${seeded.b.pendingId}`),
    );
    expect(pending).toMatchObject({ status: 'pending', decisions: [] });
  });
});
