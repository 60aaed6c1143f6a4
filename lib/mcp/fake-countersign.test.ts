// The fake Countersign the lib/mcp tests use (testing/fake-countersign.ts) must answer what the
// real console answers: the same requests go to both, the real one being the /api/v1 route
// handlers in-process on a real database, and the answers are compared.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { consoleFetch, type Fetch } from '../../testing/console-fetch';
import { approvalBody, DIGEST, makeActors } from '../../testing/api-bodies';
import { OTHER_ARGUMENTS, OTHER_ARGUMENTS_DIGEST } from '../../testing/approvals-arguments';
import { uniq } from '../../testing/factories';
import { fakeCountersign } from '../../testing/fake-countersign';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';

// Every call carries a bearer credential; next-auth does not load outside Next.
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

// What must agree: status, media type, the replay header, the problem code, and the shape of a
// success (its status, requiredApprovals and grant, and which fields it has). Ids and times differ.
async function answer(res: Response) {
  const body = await res.json();
  return {
    status: res.status,
    type: res.headers.get('content-type')?.split(';')[0],
    replayed: res.headers.get('idempotent-replayed'),
    code: body.code ?? null,
    fields: body.code ? null : Object.keys(body).sort(),
    approval: body.code || !('requiredApprovals' in body) ? null : [body.status, body.requiredApprovals, body.version],
    grant: body.grant ? Object.keys(body.grant).sort() : null,
    body,
  };
}

const servers = { untrusted: uniq('cmp-untrusted'), trusted: uniq('cmp-trusted'), auto: uniq('cmp-auto') };
const tool = (annotations: Record<string, boolean>) => ({ name: 'refund_payment', annotations });

async function script(fetch: Fetch, key: string) {
  const at = (path: string) => `http://countersign.test${path}`;
  const send = async (method: string, path: string, body?: unknown, idempotencyKey?: string) =>
    answer(
      await fetch(at(path), {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  const stage = (body: unknown, idempotencyKey?: string) => send('POST', '/api/v1/approvals', body, idempotencyKey);
  const k = uniq('idem');
  const first = approvalBody({ server: servers.untrusted });
  const reordered = Object.fromEntries(Object.entries(first).reverse());
  const answers = [
    await stage(first, `${k}-1`),
    await stage(first, `${k}-1`),
    await stage(reordered, `${k}-1`),
    await stage({ ...first, summary: 'Refund 4000.00 EUR on order 4411' }, `${k}-1`),
    await stage(first),
    await stage(approvalBody({ server: servers.trusted, tool: tool({ destructiveHint: false }) }), `${k}-2`),
    await stage(approvalBody({ server: servers.trusted, tool: tool({ readOnlyHint: true }) }), `${k}-3`),
    await stage(approvalBody({ server: servers.auto }), `${k}-4`),
  ];
  const { id, grant } = answers[7].body;
  const redeem = (argsDigest: string) =>
    send('POST', `/api/v1/grants/${grant.id}/redeem`, { server: servers.auto, tool: 'refund_payment', argsDigest });
  answers.push(
    await send('GET', `/api/v1/approvals/${id}`),
    await redeem(`sha256:${'0'.repeat(64)}`),
    await redeem(DIGEST),
    await redeem(DIGEST),
    await send('GET', `/api/v1/approvals/${id}`),
    await send('GET', `/api/v1/approvals/${crypto.randomUUID()}`),
  );
  // The arguments: required, an object, at most 32 levels and 64 KiB, the ones the digest covers.
  const { arguments: _sent, ...without } = first;
  let deep: unknown = 'bottom';
  for (let i = 0; i < 40; i++) deep = { down: deep };
  const other = { ...first, arguments: OTHER_ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST };
  answers.push(
    await stage(without, `${k}-5`),
    await stage({ ...first, arguments: OTHER_ARGUMENTS }, `${k}-6`),
    await stage({ ...first, arguments: ['4411'] }, `${k}-7`),
    await stage({ ...first, arguments: deep }, `${k}-8`),
    await stage({ ...first, arguments: { note: 'x'.repeat(70_000) } }, `${k}-9`),
    await stage(other, `${k}-1`),
    await stage(other, `${k}-10`),
  );
  // A replay is the first answer again.
  expect(answers[1].body).toEqual(answers[0].body);
  expect(answers[2].body).toEqual(answers[0].body);
  return answers.map(({ body: _body, ...rest }) => rest);
}

describe('the fake Countersign answers as the console does', () => {
  let key = '';
  beforeAll(async () => {
    key = (await makeActors()).key;
    const rule = await setPolicyRule(cli, { server: servers.auto, tool: null, requiredApprovals: 0 });
    const trusted = await trustServer(cli, servers.trusted);
    if (!rule.ok || !trusted.ok) throw new Error('set-up failed');
  });

  it('staging, replays, a reused key, policy, redemption and reads', async () => {
    const real = await script(consoleFetch, key);
    const fake = await script(
      fakeCountersign({
        trustedServers: [servers.trusted],
        rules: [{ server: servers.auto, tool: null, requiredApprovals: 0 }],
      }).fetch,
      key,
    );
    expect(fake).toEqual(real);
    // And what they agree on is what docs/api.md says.
    expect(real.map((a) => [a.status, a.replayed, a.code ?? a.approval?.slice(0, 2)])).toEqual([
      [201, null, ['pending', 2]],
      [201, 'true', ['pending', 2]],
      [201, 'true', ['pending', 2]],
      [422, null, 'idempotency_key_reused'],
      [400, null, 'idempotency_key_required'],
      [201, null, ['pending', 1]],
      [201, null, ['approved', 0]],
      [201, null, ['approved', 0]],
      [200, null, ['approved', 0]],
      [422, null, 'invalid_input'],
      [200, null, undefined],
      [409, null, 'conflict'],
      [200, null, ['redeemed', 0]],
      [404, null, 'not_found'],
      [422, null, 'arguments_required'],
      [422, null, 'arguments_digest_mismatch'],
      [422, null, 'invalid_input'],
      [422, null, 'invalid_input'],
      [422, null, 'arguments_too_large'],
      [422, null, 'idempotency_key_reused'],
      [201, null, ['pending', 2]],
    ]);
  });

  it('outcomes and state checks: the same statuses, codes and fields', async () => {
    const run = async (fetch: Fetch) => {
      const at = (path: string) => `http://countersign.test${path}`;
      const send = async (path: string, body: unknown) =>
        answer(
          await fetch(at(path), {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }),
        );
      const record = (observed: Record<string, unknown>) => ({
        eventId: uniq('evt'),
        occurredAt: '2026-12-01T10:00:00.000Z',
        requestRef: uniq('req'),
        organization: 'acme',
        principal: 'user_193',
        server: servers.untrusted,
        tool: tool({ destructiveHint: true }),
        observed,
      });
      const posted = await send('/api/v1/outcomes', {
        records: [
          record({ sent: true, clientError: 'timeout' }),
          record({ sent: true, httpStatus: 200, result: { isError: false } }),
        ],
      });
      if (!posted.body.records) throw new Error(`ingest: ${JSON.stringify(posted.body)}`);
      const [unknown, completed] = posted.body.records.map((r: { id: string }) => r.id);
      const check = (id: string, body: unknown) => send(`/api/v1/outcomes/${id}/state-check`, body);
      const answers = [
        posted,
        await check(unknown, { verdict: 'maybe', note: 'n' }),
        await check(unknown, { verdict: 'happened', note: 'Checked the ledger: credited once.' }),
        await check(unknown, { verdict: 'did_not_happen', note: 'again' }),
        await check(completed, { verdict: 'happened', note: 'n' }),
        await check(crypto.randomUUID(), { verdict: 'happened', note: 'n' }),
      ];
      const resolved = answers[2].body;
      return [
        ...answers.map(({ status, type, code, fields }) => ({ status, type, code, fields })),
        {
          resolution: resolved.resolution && Object.keys(resolved.resolution).sort(),
          verdict: resolved.resolution?.verdict,
          delivery: resolved.classification?.delivery,
          // The fake does not know the key's name: "API key <name>" in the console.
          nextStep: resolved.classification?.nextStep.replace(/API key (?!found )\S+ /, 'API key '),
        },
      ];
    };
    const real = await run(consoleFetch);
    const fake = await run(fakeCountersign().fetch);
    expect(fake).toEqual(real);
    expect(real.slice(0, 6).map((a) => ('status' in a ? [a.status, a.code] : null))).toEqual([
      [200, null],
      [422, 'invalid_input'],
      [200, null],
      [409, 'conflict'],
      [409, 'conflict'],
      [404, 'not_found'],
    ]);
  });
});
