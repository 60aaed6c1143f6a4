// Navigations timed in the page for bench:ui, and the framework's floor to hold them against: a
// bare Next.js app of two dynamic pages (rendered on every request, as the console's are) that
// link to each other, with nothing of ours in them (no session, no database, no layout beyond
// <html><body>), built once per Next.js version under .bench-data/bare-next (git-ignored).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { freePort } from '../../scripts/lib/embedded-postgres';
import { childEnvironment } from '@/lib/config';
import { log, root } from './report';
import { onCleanup } from './setup';

// Plain JavaScript in a string (tsx would wrap inner function names in __name(), unknown in the
// page). It notes the input (click, Enter) and, per animation frame, when each element was
// inserted or changed; `__benchShownAt(el)` answers when `el` was last shown so.
const PROBE = `(() => {
  if (window.__benchProbe) return;
  window.__benchProbe = true;
  const now = () => performance.timeOrigin + performance.now();
  const mark = (e) => sessionStorage.setItem('__benchInputAt', String(performance.timeOrigin + e.timeStamp));
  addEventListener('click', mark, true);
  addEventListener('keydown', (e) => { if (e.key === 'Enter') mark(e); }, true);
  const inserted = new WeakMap();
  const changed = new WeakMap();
  let added = [], touched = [], scheduled = false;
  new MutationObserver((records) => {
    for (const r of records) {
      touched.push(r.target.nodeType === Node.TEXT_NODE ? (r.target.parentNode || r.target) : r.target);
      for (const n of r.addedNodes) added.push(n);
    }
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      const t = now();
      for (const n of added) inserted.set(n, t);
      for (const n of touched) changed.set(n, t);
      added = []; touched = []; scheduled = false;
    });
  }).observe(document, { childList: true, subtree: true, characterData: true });
  window.__benchShownAt = async (el) => {
    await new Promise((r) => requestAnimationFrame(r));
    let at = 0;
    for (let n = el; n; n = n.parentNode) {
      const t = inserted.get(n);
      if (t !== undefined) { at = t; break; }
    }
    for (const d of [el, ...el.querySelectorAll('*')]) at = Math.max(at, changed.get(d) || 0, inserted.get(d) || 0);
    return at;
  };
})();`;

export const installProbe = (page: Page) => page.addInitScript({ content: PROBE });

/**
 * Runs `act` (a click or Enter), waits for the address to become `to` and every `shown` locator to
 * be visible; answers the milliseconds from the input event to the frame that showed the last of
 * them. Content that was there before the input fails the step: its selector is not the new page's.
 */
export async function timeNavigation(page: Page, act: () => Promise<void>, to: string, shown: Locator[], what: string) {
  const want = new URL(to, page.url());
  const visible = shown.map((l) => l.filter({ visible: true }).first());
  await page.evaluate(() => sessionStorage.removeItem('__benchInputAt'));
  await act();
  await page.waitForURL((u) => u.pathname === want.pathname && u.search === want.search, { timeout: 30_000 });
  for (const l of visible) await l.waitFor({ state: 'visible', timeout: 30_000 });
  const inputAt = await page.evaluate(() => Number(sessionStorage.getItem('__benchInputAt')));
  if (!inputAt) throw new Error(`${what}: the page saw no click or Enter`);
  let last = 0;
  for (const [i, l] of visible.entries()) {
    const at = await l.evaluate((el) =>
      (window as unknown as { __benchShownAt: (el: Element) => Promise<number> }).__benchShownAt(el),
    );
    if (at < inputAt) throw new Error(`${what}: shown[${i}] (${l}) was there before the input`);
    last = Math.max(last, at);
  }
  return last - inputAt;
}

const barePage = (name: string, other: string) => `import Link from 'next/link';

export const dynamic = 'force-dynamic';

export default async function Page() {
  return (
    <main>
      <h1>Bare page ${name}</h1>
      <p>Rendered at {new Date().toISOString()}</p>
      <Link href="/${other}">To page ${other.toUpperCase()}</Link> <a href="/${other}">Full load of page ${other.toUpperCase()}</a>
    </main>
  );
}
`;
const FILES: Record<string, string> = {
  'app/layout.jsx': `export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
`,
  'app/a/page.jsx': barePage('A', 'b'),
  'app/b/page.jsx': barePage('B', 'a'),
  'package.json': JSON.stringify({ name: 'bare-next', private: true }),
};

/** The bare app built (when its files or Next.js changed) and started on a free port; its origin. */
export async function startBareNext(): Promise<string> {
  const dir = path.join(root, '.bench-data/bare-next');
  const next = path.join(root, 'node_modules/next/dist/bin/next');
  const version = (
    JSON.parse(readFileSync(path.join(root, 'node_modules/next/package.json'), 'utf8')) as { version: string }
  ).version;
  const stamp = path.join(dir, '.built-with');
  const wanted = `${version}\n${JSON.stringify(FILES)}`;
  const env = childEnvironment({ NEXT_TELEMETRY_DISABLED: '1' });
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
    log(`building a bare Next.js ${version} app in .bench-data/bare-next…`);
    rmSync(dir, { recursive: true, force: true });
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
    const r = spawnSync(process.execPath, [next, 'build', '--webpack'], { cwd: dir, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bare next build failed: ${(r.stderr || r.stdout).slice(-2000)}`);
    writeFileSync(stamp, wanted);
  }
  const port = await freePort();
  const child = spawn(process.execPath, [next, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: dir,
    env,
    stdio: 'ignore',
  });
  onCleanup('stop the bare Next.js app', () => void child.kill('SIGTERM'));
  const origin = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
    if (
      await fetch(`${origin}/a`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return origin;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the bare Next.js app did not start');
  }
}
