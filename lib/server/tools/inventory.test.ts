import { beforeAll, describe, expect, it } from 'vitest';
import { trustServer, untrustServer } from '../policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { INVENTORY_MAX_TOOLS, listToolInventory } from './tools';
import {
  value,
  HOUR,
  DAY,
  ago,
  HTTP_500,
  SCHEMA_VIOLATION,
  BLOCKED,
  READ,
  SAFE_WRITE,
  MCP_DEFAULTS,
  admin,
  reviewer,
  support,
  setUpToolActors,
  record,
  stage,
  serverOf,
  toolOf,
} from '@/testing/tools-fixtures';
import { cli } from '@/lib/auth/actor';

beforeAll(setUpToolActors);

// ── listing ─────────────────────────────────────────────────────────────────────────────────

describe('listToolInventory', () => {
  // First: the file's own database holds no records yet.
  it('is empty when nothing was seen', async () => {
    expect(value(await listToolInventory(admin))).toMatchObject({ servers: [], truncated: false });
  });

  it('groups tools by server with trust, last advertised and believed hints, 7-day counts and last seen', async () => {
    const trusted = uniq('trusted');
    const wild = uniq('wild');
    await trustServer(cli, trusted);
    await record(
      // Older than a week: counts for last seen, never for the 7-day numbers.
      { server: trusted, tool: 'get_order', annotations: SAFE_WRITE, at: ago(10 * DAY), observed: HTTP_500 },
      { server: trusted, tool: 'get_order', annotations: READ, at: ago(2 * HOUR) },
      {
        server: trusted,
        tool: 'get_order',
        annotations: { ...READ, idempotentHint: false },
        at: ago(3 * HOUR),
        observed: HTTP_500,
      },
      // The latest call advertised nothing: the last advertisement stays the one two hours ago.
      { server: trusted, tool: 'get_order', at: ago(30 * 60_000), observed: SCHEMA_VIOLATION },
      { server: trusted, tool: 'update_note', annotations: SAFE_WRITE, at: ago(DAY), observed: BLOCKED },
      { server: trusted, tool: 'refund', annotations: { readOnlyHint: false }, at: ago(5 * DAY) },
      { server: wild, tool: 'lookup_customer', annotations: READ, at: ago(HOUR) },
      { server: wild, tool: 'lookup_customer', annotations: READ, at: ago(8 * DAY) },
    );

    const inventory = value(await listToolInventory(admin));
    const names = inventory.servers.map((s) => s.name);
    expect(names).toEqual([...names].sort());

    const t = await serverOf(trusted);
    expect(t.trust).toMatchObject({ by: 'cli' });
    expect(t.trust!.at).toBeInstanceOf(Date);
    expect(t.serverRule).toBeNull();
    expect(t.tools.map((x) => x.name)).toEqual(['get_order', 'refund', 'update_note']);
    expect(t.calls7d).toBe(3 + 1 + 1);
    expect(t.failures7d).toBe(2 + 1);

    const getOrder = t.tools[0];
    expect(getOrder.advertised).toMatchObject(READ);
    expect(getOrder.believed).toEqual({ readOnly: true, destructive: false, idempotent: true, openWorld: false });
    expect(getOrder.requirement).toEqual({
      requiredApprovals: 0,
      basis: 'read_only',
      blocked: false,
      basisText: 'the tool is read-only (trusted server)',
    });
    expect(getOrder.toolRule).toBeNull();
    // 2 h ok, 3 h HTTP 500, 30 min completed but not ok (schema violation): 3 calls, 2 failures.
    expect(getOrder).toMatchObject({ calls7d: 3, failures7d: 2, requests7d: 0 });
    expect(Math.abs(getOrder.lastSeen.getTime() - (Date.now() - 30 * 60_000))).toBeLessThan(60_000);

    // Hints a trusted server leaves out are MCP's defaults.
    const refund = t.tools[1];
    expect(refund.believed).toEqual(MCP_DEFAULTS);
    expect(refund.requirement).toMatchObject({ requiredApprovals: 2, basis: 'destructive_open_world' });

    const updateNote = t.tools[2];
    expect(updateNote.believed).toEqual({ readOnly: false, destructive: false, idempotent: false, openWorld: false });
    expect(updateNote.requirement).toMatchObject({ requiredApprovals: 1, basis: 'default' });
    // Blocked before sending (approval required): a call, and not one that completed ok.
    expect(updateNote).toMatchObject({ calls7d: 1, failures7d: 1 });

    // An untrusted server's hints are shown as advertised and never believed.
    const w = await serverOf(wild);
    expect(w.trust).toBeNull();
    const lookup = w.tools[0];
    expect(lookup.advertised).toMatchObject(READ);
    expect(lookup.believed).toEqual(MCP_DEFAULTS);
    expect(lookup.requirement).toMatchObject({ requiredApprovals: 2, basis: 'destructive_open_world' });
    expect(lookup).toMatchObject({ calls7d: 1, failures7d: 0 });
  });

  it('lists tools seen only in approval requests, and takes the newest advertisement from either source', async () => {
    const server = uniq('staged');
    await trustServer(cli, server);
    await record({ server, tool: 'cancel_order', annotations: READ, at: ago(DAY) });
    const before = Date.now();
    await stage(server, 'cancel_order', SAFE_WRITE);
    await stage(server, 'close_account');

    const cancel = await toolOf(server, 'cancel_order');
    expect(cancel.advertised).toMatchObject(SAFE_WRITE);
    expect(cancel.requirement).toMatchObject({ requiredApprovals: 1, basis: 'default' });
    expect(cancel).toMatchObject({ calls7d: 1, failures7d: 0, requests7d: 1 });
    expect(cancel.lastSeen.getTime()).toBeGreaterThanOrEqual(before - 5_000);

    const close = await toolOf(server, 'close_account');
    expect(close).toMatchObject({ advertised: null, calls7d: 0, failures7d: 0, requests7d: 1 });
    expect(close.believed).toEqual(MCP_DEFAULTS);

    // A later record that advertises again wins over the request.
    await record({ server, tool: 'cancel_order', annotations: READ, at: new Date(Date.now() + 1_000).toISOString() });
    expect((await toolOf(server, 'cancel_order')).advertised).toMatchObject(READ);
  });

  it('follows trust as it changes: untrusted, the same hints are no longer believed', async () => {
    const server = uniq('flip');
    await trustServer(cli, server);
    await record({ server, tool: 'get_order', annotations: READ, at: ago(HOUR) });
    expect((await toolOf(server, 'get_order')).requirement.requiredApprovals).toBe(0);
    value(await untrustServer(admin, server));
    const after = await serverOf(server);
    expect(after.trust).toBeNull();
    expect(after.tools[0].believed).toEqual(MCP_DEFAULTS);
    expect(after.tools[0].requirement).toMatchObject({ requiredApprovals: 2, basis: 'destructive_open_world' });
  });

  it('is open to every signed-in role', async () => {
    for (const viewer of [support, reviewer, admin]) expect((await listToolInventory(viewer)).ok).toBe(true);
  });
});

describe('bounds', () => {
  it(`lists at most ${INVENTORY_MAX_TOOLS} tools and says so`, async () => {
    const server = uniq('zz-many');
    const at = ago(HOUR);
    await record(
      ...Array.from({ length: INVENTORY_MAX_TOOLS + 1 }, (_, i) => ({
        server,
        tool: `tool_${String(i).padStart(5, '0')}`,
        at,
      })),
    );
    const inventory = value(await listToolInventory(admin));
    expect(inventory.truncated).toBe(true);
    expect(inventory.servers.reduce((n, s) => n + s.tools.length, 0)).toBe(INVENTORY_MAX_TOOLS);
  });
});
