// The gateway's command line (docs/gateway.md, "The gateway"). Pure: argv in, options or the flag at fault out.
import { hostnameOf, isLoopbackAddress } from './host-guard';
import { SESSION_IDLE_MS } from './idle-sessions';

export interface GatewayFlags {
  server: string;
  principal: string;
  organization: string;
  agent?: string;
  /** Seconds a call needing approval is held at most (default 50). */
  approvalWait: number;
  /** stdio mode: the server's command and its arguments (after `--`). */
  command?: string[];
  /** Streamable HTTP mode: the server's URL. */
  upstream?: URL;
  host: string;
  port: number;
  /** HTTP mode: seconds a 2025 session is kept unused (default 1800). */
  sessionIdle?: number;
  /** HTTP mode: names besides the loopback ones that `Host` and `Origin` may carry. */
  allowedHosts?: string[];
}

export type FlagsResult = { ok: true; flags: GatewayFlags } | { ok: false; flag: string; message: string };

export const USAGE = [
  'usage: countersign-gateway --server NAME --principal P --organization O [--agent A] [--approval-wait S] -- COMMAND [ARGS…]',
  '       countersign-gateway --server NAME --principal P --organization O --upstream URL [--host 127.0.0.1] [--port 8808] [--allowed-hosts H1,H2] [--session-idle S]',
].join('\n');

const VALUED = [
  '--server',
  '--principal',
  '--organization',
  '--agent',
  '--approval-wait',
  '--upstream',
  '--host',
  '--port',
  '--allowed-hosts',
  '--session-idle',
];
const NAME_MAX = 200;

export function parseFlags(argv: readonly string[]): FlagsResult {
  const values = new Map<string, string>();
  let command: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      command = argv.slice(i + 1);
      break;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 && arg.startsWith('--') ? arg.slice(0, eq) : arg;
    if (!VALUED.includes(name)) return bad(name, `unknown flag ${JSON.stringify(name)}`);
    if (values.has(name)) return bad(name, `${name} is given twice`);
    const value = eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) return bad(name, `${name} needs a value`);
    values.set(name, value);
  }
  const text = (flag: string, required: boolean): string | undefined | FlagsResult => {
    const v = values.get(flag)?.trim();
    if (v === undefined || v === '') return required ? bad(flag, `${flag} is required`) : undefined;
    if (v.length > NAME_MAX || /[\u0000-\u001f]/.test(v))
      return bad(flag, `${flag} must be at most ${NAME_MAX} printable characters`);
    return v;
  };
  const server = text('--server', true);
  if (typeof server === 'object') return server;
  const principal = text('--principal', true);
  if (typeof principal === 'object') return principal;
  const organization = text('--organization', true);
  if (typeof organization === 'object') return organization;
  const agent = text('--agent', false);
  if (typeof agent === 'object') return agent;

  const wait = values.get('--approval-wait') ?? '50';
  if (!/^\d+(\.\d+)?$/.test(wait) || Number(wait) > 3600)
    return bad('--approval-wait', '--approval-wait must be a number of seconds from 0 to 3600');

  const upstreamText = values.get('--upstream');
  let upstream: URL | undefined;
  if (upstreamText !== undefined) {
    try {
      upstream = new URL(upstreamText);
    } catch {
      return bad('--upstream', '--upstream must be an http(s) URL');
    }
    if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
      return bad('--upstream', '--upstream must be an http(s) URL');
  }
  if (upstream && command) return bad('--', 'give either --upstream URL or -- COMMAND, not both');
  if (!upstream && (!command || command.length === 0))
    return bad('--', 'give the server: -- COMMAND [ARGS…] (stdio) or --upstream URL (Streamable HTTP)');
  const httpOnly = ['--host', '--port', '--allowed-hosts', '--session-idle'].find((f) => values.has(f));
  if (!upstream && httpOnly)
    return bad(httpOnly, '--host, --port, --allowed-hosts and --session-idle are for --upstream mode only');

  const port = values.get('--port') ?? '8808';
  if (!/^\d+$/.test(port) || Number(port) > 65535) return bad('--port', '--port must be a port number (0 to 65535)');
  const host = values.get('--host') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) return bad('--host', '--host must be a host name or address');
  const idle = values.get('--session-idle') ?? String(SESSION_IDLE_MS / 1000);
  if (!/^\d+$/.test(idle) || Number(idle) < 1 || Number(idle) > 86400)
    return bad('--session-idle', '--session-idle must be a whole number of seconds from 1 to 86400');
  const allowedHosts = hostList(values.get('--allowed-hosts'));
  if (allowedHosts === null)
    return bad('--allowed-hosts', '--allowed-hosts must be host names or addresses separated by commas, without ports');
  // Bound elsewhere than loopback, the gateway is reached by names it cannot guess; it does not
  // start open to every name (docs/gateway.md "Streamable HTTP: clients that connect by URL").
  if (upstream && !isLoopbackAddress(host) && allowedHosts.length === 0)
    return bad(
      '--allowed-hosts',
      `--host ${host} is not a loopback address: give --allowed-hosts with the names clients reach the gateway by`,
    );

  return {
    ok: true,
    flags: {
      server: server!,
      principal: principal!,
      organization: organization!,
      ...(agent ? { agent } : {}),
      approvalWait: Number(wait),
      ...(command ? { command } : {}),
      ...(upstream ? { upstream, sessionIdle: Number(idle) } : {}),
      host,
      port: Number(port),
      ...(allowedHosts.length ? { allowedHosts } : {}),
    },
  };
}

const HOST_NAME = /^([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** `--allowed-hosts`: names or addresses (an IPv6 one bare or in brackets), as URLs spell them; null if any is not. */
function hostList(text: string | undefined): string[] | null {
  if (text === undefined) return [];
  const names: string[] = [];
  for (const entry of text.split(',')) {
    const h = hostnameOf(entry.trim());
    if (h.length > 253 || !(HOST_NAME.test(h) || h.startsWith('['))) return null;
    try {
      const url = new URL(`http://${h}/`);
      if (url.host !== url.hostname) return null; // a port
      names.push(url.hostname);
    } catch {
      return null;
    }
  }
  return [...new Set(names)];
}

const bad = (flag: string, message: string): FlagsResult => ({ ok: false, flag, message });
