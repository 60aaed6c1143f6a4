import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdPages } from './hold-pages';

const rssMib = (pid: number) =>
  Number(/^Rss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))![1]) / 1024;

describe('holdPages', () => {
  it('maps every page of the files in a helper until released, skipping paths that do not exist', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hold-'));
    try {
      const a = path.join(dir, 'a');
      const b = path.join(dir, 'b');
      writeFileSync(a, Buffer.alloc(48 * 2 ** 20, 1));
      writeFileSync(b, Buffer.alloc(16 * 2 ** 20, 2));
      const held = await holdPages([a, path.join(dir, 'gone'), b]);
      expect(held.bytes).toBe(64 * 2 ** 20);
      expect(held.files).toBe(2);
      // Resident in the helper's own mappings: the pages were faulted in, not only reserved.
      expect(rssMib(held.pid)).toBeGreaterThanOrEqual(64);
      await held.release();
      expect(existsSync(`/proc/${held.pid}`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a path with a line break, which the helper would read as two', async () => {
    await expect(holdPages(['/tmp/a\nb'])).rejects.toThrow(/line break/);
  });
});
