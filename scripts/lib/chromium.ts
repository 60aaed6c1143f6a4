// Playwright drives Debian's Chromium (it cannot download its own here).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { childEnvironment, config } from '@/lib/config';

export function ensureChromium(): string {
  const configured = config().CHROMIUM_PATH;
  const wanted = configured || '/usr/bin/chromium';
  if (existsSync(wanted)) return wanted;
  const isRoot = process.getuid?.() === 0;
  const isDebian = existsSync('/etc/debian_version') && existsSync('/usr/bin/apt-get');
  if (configured || !isRoot || !isDebian) {
    throw new Error(
      `No Chromium at ${wanted}. Install it (Debian: sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium binary.`,
    );
  }
  console.log('[test] installing Debian chromium (about a minute)…');
  const env = childEnvironment({ DEBIAN_FRONTEND: 'noninteractive' });
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'chromium'],
  ]) {
    const res = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (res.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${res.status})`);
  }
  if (!existsSync(wanted)) throw new Error(`apt-get installed chromium but ${wanted} is still missing`);
  return wanted;
}
