import { describe, expect, it } from 'vitest';
import { believedHints, requiredApprovalsFor, WHOLE_SERVER, type PolicyBasis } from './policy';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';

const READ: ToolAnnotations = { readOnlyHint: true };
const DESTRUCTIVE_OPEN: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, openWorldHint: true };
const SAFE_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
const CLOSED_DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, openWorldHint: false };
const OPEN_ADDITIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: true };

const rule = (toolName: string, requiredApprovals: number) => ({ toolName, requiredApprovals });

describe('requiredApprovalsFor', () => {
  const cases: [string, ToolAnnotations | null, boolean, ReturnType<typeof rule>[], number, PolicyBasis][] = [
    // [case, annotations, server trusted, rules of the server, expected, basis]
    ['trusted read-only', READ, true, [], 0, 'read_only'],
    ['untrusted server claiming read-only', READ, false, [], 2, 'destructive_open_world'],
    ['trusted destructive + open-world', DESTRUCTIVE_OPEN, true, [], 2, 'destructive_open_world'],
    ['untrusted destructive + open-world', DESTRUCTIVE_OPEN, false, [], 2, 'destructive_open_world'],
    ['trusted, non-destructive closed-world write', SAFE_WRITE, true, [], 1, 'default'],
    ['untrusted, claims a harmless write', SAFE_WRITE, false, [], 2, 'destructive_open_world'],
    ['trusted destructive, closed world', CLOSED_DESTRUCTIVE, true, [], 1, 'default'],
    ['trusted open world, additive', OPEN_ADDITIVE, true, [], 1, 'default'],
    ['trusted, no annotations (MCP defaults)', null, true, [], 2, 'destructive_open_world'],
    [
      'trusted, readOnlyHint false only (defaults for the rest)',
      { readOnlyHint: false },
      true,
      [],
      2,
      'destructive_open_world',
    ],
    ['tool rule lowers a destructive tool', DESTRUCTIVE_OPEN, true, [rule('refund_payment', 1)], 1, 'tool_rule'],
    ['tool rule raises a read-only tool', READ, true, [rule('refund_payment', 2)], 2, 'tool_rule'],
    [
      'tool rule of 0 auto-approves even on an untrusted server',
      DESTRUCTIVE_OPEN,
      false,
      [rule('refund_payment', 0)],
      0,
      'tool_rule',
    ],
    ['server rule applies when no tool rule', SAFE_WRITE, true, [rule(WHOLE_SERVER, 2)], 2, 'server_rule'],
    [
      'tool rule wins over server rule',
      SAFE_WRITE,
      true,
      [rule(WHOLE_SERVER, 2), rule('refund_payment', 0)],
      0,
      'tool_rule',
    ],
    [
      'tool rule wins whatever the order',
      SAFE_WRITE,
      true,
      [rule('refund_payment', 1), rule(WHOLE_SERVER, 0)],
      1,
      'tool_rule',
    ],
    ["another tool's rule does not apply", READ, true, [rule('other_tool', 2)], 0, 'read_only'],
  ];
  it.each(cases)('%s', (_name, annotations, serverTrusted, rules, expected, basis) => {
    expect(requiredApprovalsFor({ toolName: 'refund_payment', annotations, serverTrusted, rules })).toEqual({
      requiredApprovals: expected,
      basis,
      blocked: false,
    });
  });

  it('never lets a tool named "*" pass for a tool rule', () => {
    expect(
      requiredApprovalsFor({
        toolName: WHOLE_SERVER,
        annotations: READ,
        serverTrusted: true,
        rules: [rule(WHOLE_SERVER, 2)],
      }),
    ).toEqual({ requiredApprovals: 2, basis: 'server_rule', blocked: false });
  });

  // [case, rules, expected blocked, basis]
  const blockedCases: [
    string,
    { toolName: string; requiredApprovals: number; blocked?: boolean }[],
    boolean,
    string,
  ][] = [
    [
      'a blocked tool rule blocks even a trusted read',
      [{ ...rule('refund_payment', 2), blocked: true }],
      true,
      'tool_rule',
    ],
    ['a blocked server blocks its tools', [{ ...rule(WHOLE_SERVER, 2), blocked: true }], true, 'server_rule'],
    [
      'a tool rule lets one tool of a blocked server through',
      [{ ...rule(WHOLE_SERVER, 2), blocked: true }, rule('refund_payment', 1)],
      false,
      'tool_rule',
    ],
    ["another tool's block does not apply", [{ ...rule('other', 2), blocked: true }], false, 'read_only'],
  ];
  it.each(blockedCases)('%s', (_name, rules, blocked, basis) => {
    const verdict = requiredApprovalsFor({ toolName: 'refund_payment', annotations: READ, serverTrusted: true, rules });
    expect(verdict.blocked).toBe(blocked);
    expect(verdict.basis).toBe(basis);
    if (blocked) expect(verdict.requiredApprovals).toBe(2);
  });
});

describe('believedHints', () => {
  it('ignores every hint of an untrusted server (MCP defaults)', () => {
    expect(believedHints({ readOnlyHint: true, destructiveHint: false, openWorldHint: false }, false)).toEqual({
      readOnly: false,
      destructive: true,
      openWorld: true,
    });
  });
  it("believes a trusted server's hints and defaults the missing ones", () => {
    expect(believedHints({ destructiveHint: false }, true)).toEqual({
      readOnly: false,
      destructive: false,
      openWorld: true,
    });
  });
});
