import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { decideApproval, getApproval } from '.';
import { redeemGrant } from './grants';
import { config } from '@/lib/config';
import { digestOfCanonical } from '@/testing/approvals-arguments';
import {
  NONE,
  ONE,
  TRUSTED,
  makeApproval,
  redeemer,
  reviewer,
  setUpApprovalActors,
  value,
} from '@/testing/approvals-fixtures';

// A copy of the database (a dump, a backup) shows no argument in clear, neither while a request is
// open nor after it ended (docs/design.md "What a reviewer sees: what will run"): they are kept
// sealed, and erased as the request ends. The machine's own pg_dump reads this file's database.
const PG_DUMP = ['/usr/lib/postgresql/15/bin/pg_dump', 'pg_dump'].find((bin) =>
  bin.startsWith('/') ? existsSync(bin) : spawnSync(bin, ['--version']).status === 0,
);

function dump(): string {
  const out = spawnSync(PG_DUMP!, ['--no-owner', '--no-privileges', config().DATABASE_URL!], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (out.status !== 0) throw new Error(`pg_dump failed: ${out.stderr}`);
  return out.stdout;
}

// Every value distinctive, a number among them; one under a secret-named key (stored masked).
const ARGS = {
  zq_memo: 'QUOKKA-5521-ZEBRA',
  amount: 73419.58,
  iban_hint: 'PLATYPUS-0099',
  nested: { note: 'WOMBAT-4410' },
  api_token: 'SECRETVALUE-8812',
};
const DIGEST = digestOfCanonical(
  '{"amount":73419.58,"api_token":"SECRETVALUE-8812","iban_hint":"PLATYPUS-0099","nested":{"note":"WOMBAT-4410"},"zq_memo":"QUOKKA-5521-ZEBRA"}',
);
const IN_CLEAR = ['QUOKKA-5521', '73419', 'PLATYPUS-0099', 'WOMBAT-4410', 'SECRETVALUE', 'zq_memo', 'iban_hint'];

const found = (text: string) => IN_CLEAR.filter((v) => text.includes(v));

beforeAll(setUpApprovalActors);

// A skip says why in its name, so it is never silent.
const title = PG_DUMP
  ? 'a database dump'
  : 'a database dump (skipped: no pg_dump at /usr/lib/postgresql/15/bin or on PATH)';

describe.skipIf(!PG_DUMP)(title, () => {
  it('holds no argument value in clear while requests are open, nor after they end', async () => {
    const pending = await makeApproval({ ...ONE, arguments: ARGS, argsDigest: DIGEST });
    const approved = await makeApproval({ ...NONE, arguments: ARGS, argsDigest: DIGEST });
    // They are there, for a reviewer: masked where a key names a secret.
    expect(value(await getApproval(reviewer, pending.id)).arguments).toEqual({
      ...ARGS,
      api_token: '[masked:secret]',
    });
    const open = dump();
    // The dump holds the requests' rows: their summaries are in clear.
    expect(open).toContain(pending.id);
    expect(open).toContain('Refund 40.00 EUR on order 4411');
    expect(found(open)).toEqual([]);
    // The masked placeholder is sealed too: no argument of any kind in clear.
    expect(open).not.toContain('[masked:');

    value(await decideApproval(reviewer, { id: pending.id, decision: 'deny', reason: 'not this one', version: 1 }));
    value(await redeemGrant(redeemer, approved.grant!.id, { server: TRUSTED, tool: 'get_order', argsDigest: DIGEST }));
    const ended = dump();
    expect(found(ended)).toEqual([]);
    expect(ended).not.toContain('[masked:');
  });
});
