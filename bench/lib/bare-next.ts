// The framework's own floor for a navigation: a bare Next.js app of two dynamic pages (rendered
// on every request, as the console's are) that link to each other, with nothing of ours in them:
// no session, no database, no layout beyond <html><body>. Written under .bench-data/bare-next
// (git-ignored) and built once per Next.js version with the same `next build --webpack`; its
// node_modules is a link to the repository's.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startApp, type App } from './setup';

const page = (name: string, other: string) => `import Link from 'next/link';

export const dynamic = 'force-dynamic';

export default async function Page() {
  return (
    <main>
      <h1>Bare page ${name}</h1>
      <p>Rendered at {new Date().toISOString()}</p>
      <Link href="/${other}">To page ${other.toUpperCase()}</Link>{' '}
      <a href="/${other}">Full load of page ${other.toUpperCase()}</a>
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
  'app/a/page.jsx': page('A', 'b'),
  'app/b/page.jsx': page('B', 'a'),
  'package.json': JSON.stringify({ name: 'bare-next', private: true }, null, 2),
};

/** Builds the bare app if needed (a minute on a loaded machine) and starts it; stopped by cleanup. */
export async function startBareNext(root: string, log: (s: string) => void): Promise<App> {
  const dir = path.join(root, '.bench-data', 'bare-next');
  const nextVersion = (
    JSON.parse(readFileSync(path.join(root, 'node_modules/next/package.json'), 'utf8')) as { version: string }
  ).version;
  const stamp = path.join(dir, '.built-with');
  const wanted = `${nextVersion}\n${JSON.stringify(FILES)}`;
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
    log(`building the bare Next.js ${nextVersion} app in .bench-data/bare-next…`);
    rmSync(dir, { recursive: true, force: true });
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
    const res = spawnSync(path.join(root, 'node_modules/.bin/next'), ['build', '--webpack'], {
      cwd: dir,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
      encoding: 'utf8',
    });
    if (res.status !== 0) throw new Error(`bare next build failed: ${(res.stderr || res.stdout).slice(-2000)}`);
    writeFileSync(stamp, wanted);
  }
  return startApp(dir, {});
}
