// Demo data for the embedded default: people to sign in as. Runs once (only into an empty user table).
import type { Role } from '@/lib/auth/permissions';
import { cli, type ApiKeyActor } from '@/lib/auth/actor';

export const demoUsers: { email: string; role: Role; name: string; principalId: string }[] = [
  { email: 'admin@countersign.local', role: 'admin', name: 'Ada Admin', principalId: 'user_admin' },
  { email: 'reviewer@countersign.local', role: 'reviewer', name: 'Rui Reviewer', principalId: 'user_reviewer' },
  { email: 'reviewer2@countersign.local', role: 'reviewer', name: 'Rita Reviewer', principalId: 'user_reviewer2' },
  { email: 'support@countersign.local', role: 'support', name: 'Sam Support', principalId: 'user_support' },
];
export const DEMO_PASSWORD = 'countersign-demo';

/**
 * Seeds demo users, trusted servers, outcome records, pending approval requests and the tool catalog when there are
 * no users yet; returns whether it did. Everything is audited as the command line (`cli`), except
 * the demo's one human decision, which is the demo reviewer's. Needs DATABASE_URL and AUTH_SECRET.
 */
export async function seedDemo(now = Date.now()): Promise<boolean> {
  const { db } = await import('@/lib/server/db/db');
  const { createUser } = await import('@/lib/server/users/users');
  if ((await db.user.count()) > 0) return false;
  for (const u of demoUsers) {
    const result = await createUser(cli, { ...u, password: DEMO_PASSWORD });
    // A concurrent first start may have seeded the same user: that is fine.
    if (!result.ok && result.failure !== 'conflict') throw new Error(`seeding ${u.email}: ${result.failure}`);
  }
  await seedDemoOutcomes(now);
  return true;
}

/** Posts the demo stories and approval requests through the real paths, with a key revoked afterwards. */
async function seedDemoOutcomes(now: number): Promise<void> {
  const { createApiKey, revokeApiKey } = await import('@/lib/server/credentials/credentials');
  const { ingestOutcomes } = await import('@/lib/server/outcomes');
  const { trustServer } = await import('@/lib/server/policy/trusted-servers');
  const { DEMO_TRUSTED_SERVERS, demoOutcomes } = await import('./demo-outcomes');
  for (const name of DEMO_TRUSTED_SERVERS) await trustServer(cli, name);
  const scopes = ['outcomes:write' as const, 'approvals:request' as const, 'grants:redeem' as const];
  const key = await createApiKey(cli, { name: 'demo data (seed)', scopes });
  if (!key.ok) throw new Error(`seeding the demo key: ${key.failure}`);
  const client = {
    kind: 'apiKey' as const,
    keyId: key.value.key.id,
    name: key.value.key.name,
    scopes,
    organization: null,
  };
  const records = demoOutcomes(now);
  for (let i = 0; i < records.length; i += 500) {
    const result = await ingestOutcomes(client, { records: records.slice(i, i + 500) });
    if (!result.ok)
      throw new Error(
        `seeding demo outcomes: ${result.failure} ${result.detail ?? ''} ${JSON.stringify(result.errors ?? [])}`,
      );
  }
  await seedDemoStateChecks(key.value.key.id);
  await seedDemoApprovals(client);
  await seedDemoCatalog(client);
  const revoked = await revokeApiKey(cli, key.value.key.id);
  if (!revoked.ok) throw new Error(`revoking the demo key: ${revoked.failure}`);
}

/**
 * The demo tool catalog (scripts/demo-catalog.ts), reported as a gateway reports it, through
 * policy/evaluate: every tool accepted at its first sighting, then one changed definition, held.
 */
async function seedDemoCatalog(client: ApiKeyActor): Promise<void> {
  const { evaluatePolicy } = await import('@/lib/server/policy/policy-rules');
  const { policyEvaluateSchema } = await import('@/lib/approvals/schemas');
  const { DEMO_HELD_CHANGE, demoCatalog } = await import('./demo-catalog');
  const report = async (server: string, tools: unknown[]) => {
    const r = await evaluatePolicy(client, policyEvaluateSchema.parse({ server, tools }));
    if (!r.ok) throw new Error(`seeding the catalog of ${server}: ${r.failure} ${r.detail ?? ''}`);
    return r.value.tools;
  };
  const catalog = demoCatalog();
  for (const { server, tools } of catalog) await report(server, tools);
  const { server, tool, description } = DEMO_HELD_CHANGE;
  const changed = catalog
    .find((c) => c.server === server)!
    .tools.map((t) => (t.name === tool ? { ...t, description } : t));
  const verdicts = await report(server, changed);
  if (!verdicts.find((v) => v.name === tool)?.held) throw new Error(`seeding the catalog: ${tool} was not held`);
}

/** The demo approval requests (scripts/demo-approvals.ts), decided as each says by the demo reviewers. */
async function seedDemoApprovals(client: ApiKeyActor): Promise<void> {
  const { decideApproval, requestApproval } = await import('@/lib/server/approvals');
  const { redeemGrant } = await import('@/lib/server/approvals/grants');
  const { approvalRequestSchema } = await import('@/lib/approvals/schemas');
  const { findUserByEmail } = await import('@/lib/server/users/users');
  const { demoApprovals } = await import('./demo-approvals');
  for (const demo of demoApprovals(demoUsers[1].email, demoUsers[2].email)) {
    const failed = (step: string, r: { failure: string; detail?: string }) =>
      new Error(`seeding approval ${demo.key}: ${step}: ${r.failure} ${r.detail ?? ''}`);
    const body = approvalRequestSchema.parse(demo.body);
    const created = await (demo.withoutArguments ? withoutRequiredArguments : run)(() =>
      requestApproval(client, demo.key, body),
    );
    if (!created.ok) throw failed('request', created);
    let version = created.value.approval.version;
    let grantId: string | undefined;
    const decisions = [
      ...(demo.approvedBy ?? []).map((email) => ({
        email,
        decision: 'approve' as const,
        reason: 'Checked against the order history (demo data).',
      })),
      ...(demo.deniedBy ? [{ ...demo.deniedBy, decision: 'deny' as const }] : []),
    ];
    for (const { email, decision, reason } of decisions) {
      const reviewer = await findUserByEmail(email);
      if (!reviewer) throw new Error(`seeding approval ${demo.key}: no user ${email}`);
      const id = created.value.approval.id;
      const decided = await decideApproval(reviewer, { id, decision, reason, version });
      if (!decided.ok) throw failed('decision', decided);
      version = decided.value.version;
      grantId = decided.value.grant?.id;
    }
    if (demo.redeemed) {
      if (!grantId) throw new Error(`seeding approval ${demo.key}: no grant to redeem`);
      const redeemed = await redeemGrant(client, grantId, {
        server: body.server,
        tool: body.tool.name,
        argsDigest: body.argsDigest,
      });
      if (!redeemed.ok) throw failed('redemption', redeemed);
    }
  }
}

const run = <T>(stage: () => Promise<T>) => stage();

/**
 * Runs `stage` as a console that accepts requests without arguments would: the requirement off for
 * this one call when it is on (docs/configuration.md, COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS), then
 * back to its default.
 */
async function withoutRequiredArguments<T>(stage: () => Promise<T>): Promise<T> {
  const { config, setEnvironment } = await import('@/lib/config');
  if (!config().COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS) return stage();
  setEnvironment({ COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: 'off' });
  try {
    return await stage();
  } finally {
    setEnvironment({ COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: undefined });
  }
}

/** The demo's state checks (scripts/lib/demo-stories-resolution.ts), by the demo people. */
async function seedDemoStateChecks(apiKeyId: string): Promise<void> {
  const { db } = await import('@/lib/server/db/db');
  const { recordStateCheck } = await import('@/lib/server/outcomes');
  const { findUserByEmail } = await import('@/lib/server/users/users');
  const { DEMO_STATE_CHECKS } = await import('./lib/demo-stories-resolution');
  for (const check of DEMO_STATE_CHECKS) {
    const claim = await db.outcomeEventId.findUnique({
      where: { apiKeyId_eventId: { apiKeyId, eventId: check.eventId } },
      select: { recordId: true },
    });
    const person = await findUserByEmail(check.by);
    if (!claim || !person) continue;
    const done = await recordStateCheck(person, claim.recordId, { verdict: check.verdict, note: check.note });
    if (!done.ok && done.failure !== 'conflict') throw new Error(`seeding a state check: ${done.failure}`);
  }
}

export function printDemoSignIn(): void {
  console.log('\n  Demo sign-in (password for all: ' + DEMO_PASSWORD + ')');
  for (const u of demoUsers) console.log(`    ${u.role.padEnd(9)} ${u.email}`);
  console.log('');
}
