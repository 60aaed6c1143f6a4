import { describe, expect, it } from 'vitest';
import { actions, can, roles, type Action, type Role } from './permissions';

// The whole matrix, written out: a change to the policy must change this table too.
const expected: Record<Action, Record<Role, boolean>> = {
  'console.view': { reviewer: true, support: true, admin: true },
  'outcomes.read': { reviewer: true, support: true, admin: true },
  'incidents.read': { reviewer: true, support: true, admin: true },
  'incidents.export': { reviewer: true, support: true, admin: true },
  'approvals.read': { reviewer: true, support: true, admin: true },
  'approval.decide': { reviewer: true, support: false, admin: true },
  'approval.revoke': { reviewer: false, support: false, admin: true },
  'users.manage': { reviewer: false, support: false, admin: true },
  'apikeys.manage': { reviewer: false, support: false, admin: true },
  'servers.manage': { reviewer: false, support: false, admin: true },
  'policy.manage': { reviewer: false, support: false, admin: true },
  'audit.read': { reviewer: false, support: false, admin: true },
  'tokens.own': { reviewer: true, support: true, admin: true },
};

describe('can()', () => {
  it('has an expectation for every action', () => {
    expect(Object.keys(expected).sort()).toEqual([...actions].sort());
  });

  for (const action of actions) {
    for (const role of roles) {
      it(`${role} ${expected[action][role] ? 'may' : 'may not'} ${action}`, () => {
        expect(can({ role }, action)).toBe(expected[action][role]);
      });
    }
  }

  it('refuses everything to nobody', () => {
    for (const action of actions) {
      expect(can(null, action)).toBe(false);
      expect(can(undefined, action)).toBe(false);
    }
  });

  it('support can change no state at all', () => {
    const stateChanging: Action[] = [
      'approval.decide',
      'approval.revoke',
      'users.manage',
      'apikeys.manage',
      'servers.manage',
      'policy.manage',
    ];
    for (const a of stateChanging) expect(can({ role: 'support' }, a)).toBe(false);
  });
});
