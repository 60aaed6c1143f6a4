import { describe, expect, it } from 'vitest';
import { actions, authorize, roles, scopesGranting, type Action, type Viewer } from './permissions';
import { cli, scheduler, type Actor, type ApiKeyActor } from './actor';
import { apiScopes, type ApiScope } from '@/lib/credentials/scopes';

const person = (role: Viewer['role']): Viewer => ({
  userId: `u-${role}`,
  email: `${role}@example.test`,
  name: role,
  role,
  principalId: role,
});
const key = (...scopes: ApiScope[]): ApiKeyActor => ({
  kind: 'apiKey',
  keyId: '00000000-0000-4000-8000-000000000000',
  name: 'k',
  scopes,
  organization: null,
});

// Every actor kind: the three roles, a key holding each one scope, the system.
const columns = {
  support: person('support'),
  reviewer: person('reviewer'),
  admin: person('admin'),
  'outcomes:write': key('outcomes:write'),
  'outcomes:read': key('outcomes:read'),
  'approvals:request': key('approvals:request'),
  'grants:redeem': key('grants:redeem'),
  system: cli,
} satisfies Record<string, Actor>;
type Column = keyof typeof columns;
const order = Object.keys(columns) as Column[];

// The whole matrix, written out by hand: a change to the policy must change this table too.
// Columns:            support reviewer admin | outcomes:write outcomes:read approvals:request grants:redeem | system
const table: Record<Action, string> = {
  'console.view': '      1 1 1   0 0 0 0   0',
  'identity.read': '     1 1 1   1 1 1 1   0',
  'outcomes.read': '     1 1 1   0 1 0 0   0',
  'outcomes.write': '    0 0 0   1 0 0 0   0',
  'outcomes.state_check': '1 1 1   1 0 0 0   0',
  'outcomes.reclassify': ' 0 0 0   0 0 0 0   1',
  'incidents.read': '    1 1 1   0 1 0 0   0',
  'incidents.export': '  1 1 1   0 1 0 0   0',
  'approvals.read': '    1 1 1   0 0 1 1   0',
  'approvals.readArguments': '0 1 1   0 0 0 0   0',
  'approvals.request': ' 0 0 0   0 0 1 0   0',
  'policy.evaluate': '   1 1 1   0 0 1 0   0',
  'approval.decide': '   0 1 1   0 0 0 0   0',
  'approval.revoke': '   0 0 1   0 0 0 0   0',
  'grants.redeem': '     0 0 0   0 0 0 1   0',
  'users.create': '      0 0 1   0 0 0 0   1',
  'users.manage': '      0 0 1   0 0 0 0   0',
  'apikeys.manage': '    0 0 1   0 0 0 0   1',
  'servers.manage': '    0 0 1   0 0 0 0   1',
  'policy.manage': '     0 0 1   0 0 0 0   1',
  'webhooks.manage': '   0 0 1   0 0 0 0   0',
  'audit.read': '        0 0 1   0 0 0 0   1',
  'tokens.own': '        1 1 1   0 0 0 0   0',
  'tokens.issue': '      0 0 0   0 0 0 0   1',
  'sessions.own': '      1 1 1   0 0 0 0   0',
  'sessions.manage': '   0 0 1   0 0 0 0   0',
  'users.provision': '   0 0 0   0 0 0 0   1',
};
const expected = (action: Action, column: Column): boolean => {
  const cells = table[action].trim().split(/\s+/);
  expect(cells).toHaveLength(order.length);
  return cells[order.indexOf(column)] === '1';
};

describe('authorize()', () => {
  it('has a row for every action and a column for every role and scope', () => {
    expect(Object.keys(table).sort()).toEqual([...actions].sort());
    for (const r of roles) expect(order).toContain(r);
    for (const s of apiScopes) expect(order).toContain(s);
  });

  for (const action of actions) {
    for (const column of order) {
      it(`${column} ${expected(action, column) ? 'may' : 'may not'} ${action}`, () => {
        expect(authorize(columns[column], action)).toBe(expected(action, column));
      });
    }
  }

  it('the schedule is the system as the command line is', () => {
    for (const action of actions) expect(authorize(scheduler, action)).toBe(expected(action, 'system'));
  });

  it('a person through a personal token may what the same person may in the console', () => {
    for (const role of roles)
      for (const action of actions)
        expect(authorize({ ...person(role), kind: 'user', tokenId: 'tok' }, action)).toBe(expected(action, role));
  });

  it('a key with several scopes may what any one of them may; with none, nothing', () => {
    const both = key('outcomes:read', 'grants:redeem');
    for (const action of actions) {
      expect(authorize(both, action)).toBe(expected(action, 'outcomes:read') || expected(action, 'grants:redeem'));
      expect(authorize(key(), action)).toBe(false);
    }
  });

  it('refuses everything to nobody', () => {
    for (const action of actions) {
      expect(authorize(null, action)).toBe(false);
      expect(authorize(undefined, action)).toBe(false);
    }
  });

  it('support can change no state at all', () => {
    const stateChanging: Action[] = [
      'outcomes.write',
      'approvals.request',
      'approval.decide',
      'approval.revoke',
      'grants.redeem',
      'users.create',
      'users.manage',
      'apikeys.manage',
      'servers.manage',
      'policy.manage',
      'tokens.issue',
    ];
    for (const a of stateChanging) expect(authorize(person('support'), a)).toBe(false);
  });

  it('names the scopes that let a key in, in the listed order (the API says them in a 403)', () => {
    expect(scopesGranting('identity.read')).toEqual([
      'outcomes:write',
      'outcomes:read',
      'approvals:request',
      'grants:redeem',
    ]);
    expect(scopesGranting('approvals.read')).toEqual(['approvals:request', 'grants:redeem']);
    expect(scopesGranting('incidents.export')).toEqual(['outcomes:read']);
    expect(scopesGranting('policy.evaluate')).toEqual(['approvals:request']);
    expect(scopesGranting('approval.decide')).toEqual([]);
  });
});
