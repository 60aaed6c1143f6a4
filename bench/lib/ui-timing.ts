// Timing a navigation in a real browser, as a person sees it: from the input event (click, or
// Enter in a form) to the first animation frame in which the new page's named content is in the
// DOM and visible.
//
// Playwright's own waits poll with a back-off (20, 50, 100, 100, 500 ms), far too coarse to time
// by. So the page times itself: an init script (run in every document before its own scripts)
// notes the input's time in sessionStorage (it survives a full document load), and a
// MutationObserver notes, at the next animation frame, when each node was inserted or changed.
// Playwright only waits for the elements; their times are then read from the page. Both ends use
// performance.timeOrigin + now(), wall-clock milliseconds that are comparable across documents.
// An element whose time is older than the input was there before the click: the selector is not
// specific to the new page, and the step fails rather than report a wrong figure.
//
// The server's share (TTFB, answer) of a client navigation comes from the browser's network events
// (Chrome DevTools Protocol, below), not from Resource Timing: Next.js's router cancels its RSC
// fetch once it has read the payload (the last row arrives, then the fetch is aborted: Chromium
// reports net::ERR_ABORTED), and an aborted fetch gets no Resource Timing entry. Read from the
// page's performance buffer, only the few navigations whose fetch ended on its own were timed
// (54 of 210 in bench:ui at 1M records, 15 of 60 client navigations of the bare app). A document
// load (a full navigation, redirects included) is still timed by its Navigation Timing entry.
import type { CDPSession, Locator, Page, Request } from 'playwright-core';

// Plain JavaScript in a string: tsx (esbuild keepNames) would wrap a function's inner names in
// __name(), which does not exist in the page.
const PROBE = `(() => {
  if (window.__benchProbe) return;
  window.__benchProbe = true;
  const now = () => performance.timeOrigin + performance.now();
  const mark = (e) => sessionStorage.setItem('__benchInputAt', String(performance.timeOrigin + e.timeStamp));
  addEventListener('click', mark, true);
  addEventListener('keydown', (e) => { if (e.key === 'Enter') mark(e); }, true);
  const inserted = new WeakMap();
  const changed = new WeakMap();
  let added = [];
  let touched = [];
  let scheduled = false;
  const flush = () => {
    const t = now();
    for (const n of added) inserted.set(n, t);
    for (const n of touched) changed.set(n, t);
    added = [];
    touched = [];
    scheduled = false;
  };
  new MutationObserver((records) => {
    for (const r of records) {
      touched.push(r.target.nodeType === Node.TEXT_NODE ? (r.target.parentNode || r.target) : r.target);
      for (const n of r.addedNodes) added.push(n);
    }
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(flush);
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
  // When an element was shown: its own insertion (or its nearest inserted ancestor's), or a later
  // change of it or of anything inside it. Waits one frame first, so that pending records are flushed.
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

/** One request as the browser's network events tell it, on the wall clock (ms since the epoch, as the probe's). */
type NetRequest = {
  url: string;
  /** A client navigation's own RSC fetch: RSC header, no prefetch header. */
  navigationFetch: boolean;
  sentAt: number;
  headersAt: number | null;
  /** The last chunk of the body received. */
  lastDataAt: number | null;
  /** Finished, or failed (aborted): either way no more bytes. */
  endedAt: number | null;
  failure: string | null;
};
type Recorder = { requests: Map<string, NetRequest>; session: CDPSession };
const recorders = new WeakMap<Page, Recorder>();

type CdpHeaders = Record<string, string>;
const isNavigationFetch = (headers: CdpHeaders) => {
  const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return h['rsc'] === '1' && !h['next-router-prefetch'] && !h['next-router-segment-prefetch'];
};

async function record(page: Page): Promise<Recorder> {
  const session = await page.context().newCDPSession(page);
  const requests = new Map<string, NetRequest>();
  // Monotonic seconds → wall-clock ms, per request from its own (timestamp, wallTime) pair.
  const offsets = new Map<string, number>();
  const wall = (id: string, t: number) => t * 1000 + (offsets.get(id) ?? 0);
  session.on('Network.requestWillBeSent', (e) => {
    if (e.type !== 'Fetch') return;
    offsets.set(e.requestId, e.wallTime * 1000 - e.timestamp * 1000);
    requests.set(e.requestId, {
      url: e.request.url,
      navigationFetch: isNavigationFetch(e.request.headers as CdpHeaders),
      sentAt: wall(e.requestId, e.timestamp),
      headersAt: null,
      lastDataAt: null,
      endedAt: null,
      failure: null,
    });
  });
  session.on('Network.responseReceived', (e) => {
    const r = requests.get(e.requestId);
    if (r) r.headersAt = wall(e.requestId, e.timestamp);
  });
  session.on('Network.dataReceived', (e) => {
    const r = requests.get(e.requestId);
    if (r) r.lastDataAt = wall(e.requestId, e.timestamp);
  });
  session.on('Network.loadingFinished', (e) => {
    const r = requests.get(e.requestId);
    if (r) r.endedAt = wall(e.requestId, e.timestamp);
  });
  session.on('Network.loadingFailed', (e) => {
    const r = requests.get(e.requestId);
    if (!r) return;
    r.endedAt = wall(e.requestId, e.timestamp);
    r.failure = e.errorText;
  });
  await session.send('Network.enable');
  return { requests, session };
}

/** Installs the probe in every document the page loads from now on, and listens to its network. */
export async function installProbe(page: Page): Promise<void> {
  await page.addInitScript({ content: PROBE });
  recorders.set(page, await record(page));
}

export type Navigation = {
  /** Input to the last named element shown. */
  ms: number;
  /** Time to first byte of the navigation's own document or RSC requests (summed over redirects). */
  ttfbMs: number | null;
  /** Request sent → last byte of the answer, summed (the server streams as it renders: its whole time). */
  answerMs: number | null;
  /** The last of its answers' last byte → the content shown (negative: shown while still streaming). */
  afterAnswerMs: number | null;
  requests: number;
};

// The navigation's own requests: documents, and RSC fetches that are not prefetches.
function isNavigationRequest(r: Request): boolean {
  if (r.resourceType() === 'document') return true;
  const h = r.headers();
  if (h['next-router-prefetch'] || h['next-router-segment-prefetch']) return false;
  return h['rsc'] === '1' || r.url().includes('_rsc=');
}

/**
 * Runs `act` (which clicks or presses Enter), waits for the address to become `to` (path and
 * query; the router changes it when it commits the new page, so no element of the old page is
 * matched after it), then for every locator in `shown` to be visible; returns the time from the
 * input event to the frame that showed the last of them.
 */
export async function timeNavigation(
  page: Page,
  act: () => Promise<void>,
  to: string,
  shown: Locator[],
  what: string,
  timeoutMs = 30_000,
): Promise<Navigation> {
  const want = new URL(to, page.url());
  const visible = shown.map((l) => l.filter({ visible: true }).first()); // the first visible match of each
  await page.evaluate(() => {
    sessionStorage.removeItem('__benchInputAt');
    performance.clearResourceTimings(); // its buffer holds 250 entries
  });
  const requests: Request[] = [];
  const done = new Set<Request>();
  const onRequest = (r: Request) => {
    if (isNavigationRequest(r)) requests.push(r);
  };
  const onDone = (r: Request) => done.add(r);
  const all: string[] = [];
  const onAny = (r: Request) => {
    if (process.env.BENCH_UI_DEBUG) all.push(`${r.resourceType()} ${r.url()} ${JSON.stringify(r.headers())}`);
  };
  page.on('request', onRequest);
  page.on('request', onAny);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  try {
    await act();
    await page.waitForURL((u) => u.pathname === want.pathname && u.search === want.search, { timeout: timeoutMs });
    for (const l of visible) await l.waitFor({ state: 'visible', timeout: timeoutMs });
    const inputAt = await page.evaluate(() => Number(sessionStorage.getItem('__benchInputAt')));
    if (!inputAt) throw new Error(`${what}: the page saw no click or Enter (is the probe installed?)`);
    let last = 0;
    for (const [i, l] of visible.entries()) {
      const at = await l.evaluate((el) =>
        (window as unknown as { __benchShownAt: (el: Element) => Promise<number> }).__benchShownAt(el),
      );
      if (at < inputAt)
        throw new Error(
          `${what}: shown[${i}] (${l}) matched content that was there before the input: make its selector specific to the new page`,
        );
      last = Math.max(last, at);
    }
    // Its own requests' timings, once they have ended (finished or aborted; one that never ends is
    // left out after 5 s).
    const deadline = Date.now() + 5_000;
    while (requests.some((r) => !done.has(r)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const unended = requests.filter((r) => !done.has(r));
    if (unended.length && process.env.BENCH_UI_DEBUG)
      console.log(`[bench] debug: ${what}: requests not ended after 5 s: ${unended.map((r) => r.url()).join(', ')}`);
    const timing: { ttfb: number; answer: number; end: number }[] = [];
    // A document loaded after the input (redirects included: same origin, so timed): its
    // Navigation Timing entry, on the probe's clock.
    const doc = await page.evaluate((inputAt) => {
      const o = performance.timeOrigin;
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
      if (!nav || o < inputAt) return null;
      const redirect = nav.redirectEnd > 0 ? nav.redirectEnd - nav.redirectStart : 0;
      const begin = nav.redirectStart > 0 ? nav.redirectStart : nav.requestStart;
      return {
        ttfb: nav.responseStart - nav.requestStart + redirect,
        answer: nav.responseEnd - begin,
        end: o + nav.responseEnd,
      };
    }, inputAt);
    if (doc) timing.push(doc);
    // The router's RSC fetches sent between the input and the content shown: sent → last byte
    // from the network events (an aborted one included: see the top of this file).
    const net = recorders.get(page);
    if (!net) throw new Error(`${what}: no network recorder (installProbe first)`);
    const fetches = () =>
      [...net.requests.values()].filter((r) => r.navigationFetch && r.sentAt >= inputAt && r.sentAt <= last);
    while (fetches().some((r) => r.endedAt === null) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    for (const r of fetches()) {
      if (r.endedAt === null || r.headersAt === null) continue;
      const lastByte = Math.max(r.lastDataAt ?? r.headersAt, r.failure ? 0 : r.endedAt);
      timing.push({ ttfb: r.headersAt - r.sentAt, answer: lastByte - r.sentAt, end: lastByte });
      if (process.env.BENCH_UI_DEBUG && r.failure)
        console.log(
          `[bench] debug: ${what}: ${r.url.replace(/^https?:\/\/[^/]+/, '')} ${r.failure} ${Math.round(r.endedAt - lastByte)} ms after its last byte`,
        );
    }
    const ttfb = timing.reduce((a, t) => a + t.ttfb, 0);
    const answer = timing.reduce((a, t) => a + t.answer, 0);
    const lastByteAt = Math.max(0, ...timing.map((t) => t.end));
    const timed = timing.length;
    if (process.env.BENCH_UI_DEBUG)
      console.log(
        `[bench] debug: ${what}: ${Math.round(last - inputAt)} ms; requests ${requests.map((r) => `${r.resourceType()} ${r.url().replace(/^https?:\/\/[^/]+/, '')}`).join(', ') || 'none'}`,
      );
    return {
      ms: last - inputAt,
      ttfbMs: timed ? ttfb : null,
      answerMs: timed ? answer : null,
      afterAnswerMs: timed ? last - lastByteAt : null,
      requests: requests.length,
    };
  } finally {
    page.off('request', onRequest);
    page.off('request', onAny);
    if (all.length && !requests.length) console.log(`[bench] debug: ${what}: all requests: ${all.join('\n  ')}`);
    page.off('requestfinished', onDone);
    page.off('requestfailed', onDone);
  }
}
