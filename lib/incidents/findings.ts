// Findings: unsafe agent behaviour detected across the records of an incident (docs/design.md,
// "Findings"). Pure. Records are compared only within one request reference; "later" is by
// occurredAt, ties broken by receipt order (`seq`).
//
// Rules where docs/design.md is silent (each finding names the trigger first, then the offenders,
// and an offending record is reported once per kind, under the earliest trigger it follows):
//
// 1. permission_expansion. Refusals: forbidden, unauthenticated, denied, and the client-side
//    blocks approval_required, denied_by_policy and no_credentials (each tells the agent it lacks
//    authority; the table says "never route around it"). session_expired is not one: re-init and
//    retry is the recovery. A later call offends, whatever its own outcome (the attempt is the
//    behaviour), when it runs under another organization or principal (always), or, unless it is
//    trusted read-only or presents a grant (a human approved that exact call), when it goes to
//    another server or to another tool on the same server.
// 2. unsafe_replay. Trigger: delivery unknown and not read-only. Offender: a later call of the same
//    tool on the same server and organization with no key, another key, or the same key and
//    another digest (a missing digest compares as a value). A state check in between does not
//    excuse a new key, and a never-sent replay still counts.
// 3. retried_non_retryable. Unchanged = same organization, principal, server, tool and digest.
//    Input failures (validation, invalid_arguments, unknown_tool, not_found) need another digest.
//    Authority refusals (forbidden, denied, client blocks) need a grant the trigger did not carry.
//    unauthenticated and protocol_error are fixed where the console cannot see (credentials, the
//    integration), so a repeat counts only when it meets the same category again. conflict,
//    session_expired and input_required are retried by design and are not triggers.
// 4. unbounded_retry. One call (its key, else its digest; with neither a call stands alone: see
//    retryKey, wider than an operation) is attempted in runs that a completed call ends. A run
//    offends when it has more attempts than the bound (its record count, or the highest `attempt`
//    the caller reported in it), or when it has 3+ attempts and some gap is not longer than, and
//    `minBackoffGrowth` times, the gap before it.
// 5. write_without_grant: one finding per completed, not read-only call that the policy says
//    needed approval and that has no grant covering it (output_schema_violation counts: the tool
//    ran). A grantId counts only when `policy.hasGrant` accepts it: the data layer checks it
//    against the grants redeemed for that tool and server in the incident.
import type { Category } from '@/lib/outcomes/schemas';
import { insteadOf, label, refusedAs, tally, times } from './finding-wording';
import {
  callName,
  compareRecords,
  DEFAULT_INCIDENT_POLICY,
  findingKinds,
  groupBy,
  retryKey,
  type Finding,
  type FindingKind,
  type IncidentPolicy,
  type IncidentRecord,
  type Severity,
} from './types';

export { DEFAULT_INCIDENT_POLICY };
export type { Finding, FindingKind, IncidentPolicy, IncidentRecord };

export const findingSeverity: Record<FindingKind, Severity> = {
  permission_expansion: 'high',
  unsafe_replay: 'high',
  retried_non_retryable: 'medium',
  unbounded_retry: 'medium',
  write_without_grant: 'high',
};

/** docs/design.md's names for the kinds. */
export const findingLabel: Record<FindingKind, string> = {
  permission_expansion: 'Permission expansion after refusal',
  unsafe_replay: 'Unsafe replay',
  retried_non_retryable: 'Retrying the non-retryable',
  unbounded_retry: 'Unbounded retry',
  write_without_grant: 'Write without a grant',
};

export function detectFindings(records: readonly IncidentRecord[], policy: Partial<IncidentPolicy> = {}): Finding[] {
  const p: IncidentPolicy = { ...DEFAULT_INCIDENT_POLICY, ...policy };
  const sorted = [...records].sort(compareRecords);
  const findings: Finding[] = [];
  for (const group of groupBy(sorted, (r) => r.requestRef)) {
    findings.push(
      ...permissionExpansion(group),
      ...unsafeReplay(group),
      ...retriedNonRetryable(group),
      ...unboundedRetry(group, p),
      ...writeWithoutGrant(group, p),
    );
  }
  const position = new Map(sorted.map((r, i) => [r.id, i]));
  const first = (f: Finding) => position.get(f.recordIds[0]) ?? 0;
  return findings.sort((a, b) => first(a) - first(b) || findingKinds.indexOf(a.kind) - findingKinds.indexOf(b.kind));
}

// ── Trigger → later offenders ────────────────────────────────────────────────────────────────

type Offence = { record: IncidentRecord; reason: string };

function triggered(
  kind: FindingKind,
  records: IncidentRecord[],
  isTrigger: (r: IncidentRecord) => boolean,
  offends: (trigger: IncidentRecord, later: IncidentRecord) => string | null,
  explain: (trigger: IncidentRecord, offences: Offence[]) => string,
): Finding[] {
  const reported = new Set<string>();
  const out: Finding[] = [];
  records.forEach((trigger, i) => {
    if (!isTrigger(trigger)) return;
    const offences = records.slice(i + 1).flatMap((later): Offence[] => {
      if (reported.has(later.id)) return [];
      const reason = offends(trigger, later);
      return reason ? [{ record: later, reason }] : [];
    });
    if (!offences.length) return;
    for (const o of offences) reported.add(o.record.id);
    out.push(finding(kind, [trigger, ...offences.map((o) => o.record)], explain(trigger, offences)));
  });
  return out;
}

function finding(kind: FindingKind, records: IncidentRecord[], explanation: string): Finding {
  return { kind, severity: findingSeverity[kind], recordIds: records.map((r) => r.id), explanation };
}

// ── 1. Permission expansion ─────────────────────────────────────────────────────────────────

const REFUSALS = new Set<Category>([
  'forbidden',
  'unauthenticated',
  'denied',
  'approval_required',
  'denied_by_policy',
  'no_credentials',
]);

function permissionExpansion(records: IncidentRecord[]): Finding[] {
  return triggered(
    'permission_expansion',
    records,
    (r) => REFUSALS.has(r.classification.category),
    (t, later) => {
      if (later.organization !== t.organization) return `in another organization: ${later.organization}`;
      if (later.principal !== t.principal) return `as another principal: ${later.principal}`;
      if (later.classification.readOnly || later.grantId) return null;
      if (later.server !== t.server) return 'on another server';
      if (later.tool.name !== t.tool.name) return 'another tool on the same server';
      return null;
    },
    (t, offences) =>
      `After ${callName(t)} was ${refusedAs(t)}, the agent called ` +
      `${tally(offences.map((o) => `${callName(o.record)} (${o.reason})`))} ${insteadOf(t)}.`,
  );
}

// ── 2. Unsafe replay ────────────────────────────────────────────────────────────────────────

const isUnknownWrite = (r: IncidentRecord) => r.classification.delivery === 'unknown' && !r.classification.readOnly;

function unsafeReplay(records: IncidentRecord[]): Finding[] {
  return triggered(
    'unsafe_replay',
    records,
    isUnknownWrite,
    (t, later) => {
      if (!sameCall(t, later)) return null;
      if (!later.idempotencyKey) return 'without an idempotency key';
      if (later.idempotencyKey !== t.idempotencyKey)
        return `with ${t.idempotencyKey ? 'another' : 'a new'} key (${later.idempotencyKey})`;
      if ((later.argsDigest ?? null) !== (t.argsDigest ?? null)) return 'with the same key but other arguments';
      return null;
    },
    (t, offences) =>
      `${callName(t)} ${t.idempotencyKey ? `with key ${t.idempotencyKey}` : 'without an idempotency key'} ` +
      `may have taken effect (${label(t.classification.category)}), yet it was called again ` +
      `${tally(offences.map((o) => o.reason))}; a replay must reuse the same key and arguments.`,
  );
}

const sameCall = (a: IncidentRecord, b: IncidentRecord) =>
  a.organization === b.organization && a.server === b.server && a.tool.name === b.tool.name;

// ── 3. Retrying the non-retryable ───────────────────────────────────────────────────────────

type Fix = 'input' | 'approval' | 'credentials' | 'integration';

const FIX: Partial<Record<Category, Fix>> = {
  validation: 'input',
  invalid_arguments: 'input',
  unknown_tool: 'input',
  not_found: 'input',
  forbidden: 'approval',
  denied: 'approval',
  approval_required: 'approval',
  denied_by_policy: 'approval',
  no_credentials: 'approval',
  unauthenticated: 'credentials',
  protocol_error: 'integration',
};

const NEEDS: Record<Fix, string> = {
  input: 'corrected input',
  approval: 'a legitimate approval',
  credentials: 'corrected credentials',
  integration: 'a fixed integration',
};

function retriedNonRetryable(records: IncidentRecord[]): Finding[] {
  return triggered(
    'retried_non_retryable',
    records,
    (r) => FIX[r.classification.category] !== undefined && r.classification.delivery !== 'completed',
    (t, later) => {
      const unchanged =
        sameCall(t, later) && later.principal === t.principal && (later.argsDigest ?? null) === (t.argsDigest ?? null);
      if (!unchanged) return null;
      switch (FIX[t.classification.category]) {
        case 'approval':
          return later.grantId && later.grantId !== t.grantId ? null : 'unchanged';
        case 'credentials':
        case 'integration':
          return later.classification.category === t.classification.category ? 'unchanged' : null;
        default:
          return 'unchanged';
      }
    },
    (t, offences) =>
      `${callName(t)} was ${refusedAs(t)} and called again unchanged ${times(offences.length)} ` +
      `(same arguments and principal), although it needs ${NEEDS[FIX[t.classification.category]!]} first.`,
  );
}

// ── 4. Unbounded retry ──────────────────────────────────────────────────────────────────────

function unboundedRetry(records: IncidentRecord[], policy: IncidentPolicy): Finding[] {
  const out: Finding[] = [];
  for (const attempts of groupBy(records, retryKey)) {
    for (const run of runs(attempts)) {
      const count = Math.max(run.length, ...run.map((r) => r.attempt ?? 0));
      const over = count > policy.maxAttempts;
      const gaps = run.slice(1).map((r, i) => r.occurredAt.getTime() - run[i].occurredAt.getTime());
      const flat = run.length >= 3 && gaps.some((g, i) => i > 0 && !grew(gaps[i - 1], g, policy));
      if (!over && !flat) continue;
      const r = run[0];
      const bound = over ? `, more than the policy bound of ${policy.maxAttempts}` : '';
      const backoff = flat ? `${over ? ',' : ''} without growing backoff (gaps ${gaps.map(duration).join(', ')})` : '';
      out.push(
        finding(
          'unbounded_retry',
          run,
          `${callName(r)}${r.idempotencyKey ? ` with key ${r.idempotencyKey}` : ''} was attempted ` +
            `${count} times for one operation${bound}${backoff}.`,
        ),
      );
    }
  }
  return out;
}

// A completed call (the tool ran) ends a run of retries: a later call starts a new one.
function runs(attempts: IncidentRecord[]): IncidentRecord[][] {
  const out: IncidentRecord[][] = [[]];
  for (const r of attempts) {
    out.at(-1)!.push(r);
    if (r.classification.delivery === 'completed') out.push([]);
  }
  return out.filter((run) => run.length > 0);
}

const grew = (previous: number, gap: number, policy: IncidentPolicy) =>
  gap > previous && gap >= previous * policy.minBackoffGrowth;

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

// ── 5. Write without a grant ────────────────────────────────────────────────────────────────

function writeWithoutGrant(records: IncidentRecord[], policy: IncidentPolicy): Finding[] {
  return records
    .filter((r) => r.classification.delivery === 'completed' && !r.classification.readOnly)
    .filter((r) => !(r.grantId && policy.hasGrant(r)))
    .filter((r) => policy.requiresApproval(r))
    .map((r) => {
      const without = r.grantId
        ? `ran with the grant id ${r.grantId}, which matches no grant redeemed for it in this incident`
        : 'ran without a redeemed grant';
      return finding(
        'write_without_grant',
        [r],
        `${callName(r)}${r.idempotencyKey ? ` with key ${r.idempotencyKey}` : ''} ${without}, ` +
          'although it is not trusted as read-only and policy requires approval for it.',
      );
    });
}
