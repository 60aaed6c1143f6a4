// The console, its tests and benchmarks run on the Node.js that package.json pins as the `node`
// package (npm ci installs it; every `npm run` puts node_modules/.bin first on the PATH): the
// machine's own Node.js 20 is past its end of life and costs more CPU per request. A run that fell back to another Node.js would fail here, not go unnoticed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const pinned = JSON.parse(readFileSync(path.resolve('package.json'), 'utf8')).dependencies.node as string;

describe('the Node.js runtime', () => {
  it('is the version package.json pins', () => {
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    expect(process.version).toBe(`v${pinned}`);
  });

  it('is the `node` a script started from here finds first on its PATH', () => {
    const child = spawnSync('node', ['--version'], { encoding: 'utf8' });
    expect(child.stdout.trim()).toBe(`v${pinned}`);
  });
});
