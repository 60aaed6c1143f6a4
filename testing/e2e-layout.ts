// What the layout specs (e2e/layout/*.spec.ts) check of a page: a level-1 heading, no sideways
// scrolling, an item on screen and not clipped, and axe's verdict.
import AxeBuilder from '@axe-core/playwright';
import { expect, type Locator, type Page } from '@playwright/test';

export const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name });

/** How far the page scrolls sideways (0 when it fits). */
export const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * Visible, inside the viewport's width, and not cut off by any box around it that clips
 * (a table scrolling inside its card counts as cut off: people do not find what is off to the side).
 */
export async function expectOnScreen(item: Locator, what: string) {
  await expect(item, what).toBeVisible();
  // Sideways only, as the page opened: no scrolling here (scrolling into view would also scroll a
  // table's box sideways and hide the very clipping this looks for).
  const clip = await item.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    if (r.left < -0.5 || r.right > vw + 0.5)
      return `outside the viewport: ${Math.round(r.left)}–${Math.round(r.right)} of ${vw}`;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX === 'visible') continue;
      if (a.scrollLeft !== 0) return `<${a.tagName.toLowerCase()}> was scrolled sideways by ${a.scrollLeft} px`;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5)
        return `clipped by <${a.tagName.toLowerCase()} class="${a.className}">: ${Math.round(r.left)}–${Math.round(r.right)} in ${Math.round(b.left)}–${Math.round(b.right)}`;
    }
    return null;
  });
  expect(clip, what).toBeNull();
}

/** axe finds no serious or critical violation on the page. */
export async function expectAccessible(page: Page, what: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(' | ')}`,
    );
  expect(serious, what).toEqual([]);
}
