// wrk (the Debian package) as the load generator where a Node.js client would take the CPU the
// console needs: C keep-alive connections, each sending its next request as soon as the answer
// is read. Bodies are templates: every MARK in one becomes a tag unique to the request, of the
// same length (so a protobuf body stays valid), which keeps ids unique without a Node.js process
// making bodies during the run.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnvironment } from '@/lib/config';
import { log } from './report';

export const MARK = 'Zq9Xw7Kp';
const WRK = '/usr/bin/wrk';

const SCRIPT = `
local bodies, n, prefix = {}, 0, ""
function init(args)
  wrk.method = args[1]
  prefix = args[2]
  for i = 3, #args do
    local f = assert(io.open(args[i], "rb"))
    bodies[#bodies + 1] = f:read("*a")
    f:close()
  end
end
function request()
  if #bodies == 0 then return wrk.format() end
  n = n + 1
  local body = bodies[(n - 1) % #bodies + 1]:gsub("${MARK}", prefix .. string.format("%06x", n))
  return wrk.format(nil, nil, nil, body)
end
function done(s, latency)
  local e = s.errors
  io.write(string.format('\\n{"requests":%d,"us":%d,"socket":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    s.requests, s.duration, e.connect + e.read + e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

/** Installs wrk with apt-get when it is missing (as root; otherwise says how). */
export function ensureWrk(): void {
  if (existsSync(WRK)) return;
  log('wrk is missing: apt-get install -y wrk…');
  const env = childEnvironment({ DEBIAN_FRONTEND: 'noninteractive' });
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'wrk'],
  ]) {
    const r = spawnSync('/usr/bin/apt-get', args, { env, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed: install wrk (Debian: apt-get install wrk)`);
  }
}

export type WrkRun = {
  requests: number;
  seconds: number;
  /** Answers that were not 2xx or 3xx. */
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  rate: number;
  p50: number;
  p99: number;
};

/**
 * `connections` connections for `seconds` on one wrk thread. `prefix` (two characters, unique per
 * run in a database) starts each request's tag.
 */
export async function wrk(opts: {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  bodies?: Buffer[];
  prefix?: string;
}): Promise<WrkRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  try {
    writeFileSync(path.join(dir, 'bench.lua'), SCRIPT);
    const files = (opts.bodies ?? []).map((b, i) => {
      writeFileSync(path.join(dir, `${i}.body`), b);
      return path.join(dir, `${i}.body`);
    });
    const headers = Object.entries(opts.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--timeout', '10s', ...headers];
    args.push('-s', path.join(dir, 'bench.lua'), opts.url, '--', opts.method ?? 'GET', opts.prefix ?? 'xx', ...files);
    const child = spawn(WRK, args, { env: childEnvironment({}), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = out.trim().split('\n').pop() ?? '';
    if (code !== 0 || !line.startsWith('{')) throw new Error(`wrk failed (exit ${code}): ${out.slice(-2000)}`);
    const r = JSON.parse(line) as Record<string, number>;
    const seconds = r.us / 1e6;
    return {
      requests: r.requests,
      seconds,
      non2xx: r.status,
      socketErrors: r.socket,
      timeouts: r.timeout,
      rate: r.requests / seconds,
      p50: r.p50 / 1000,
      p99: r.p99 / 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
