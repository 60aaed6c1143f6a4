// `npm run bench:ui [-- --short]`: the screens as people feel them, in a real browser. On a fresh
// database holding --records outcome records over the last 30 days and --pending pending approval
// requests in all (bench/lib/data.ts; the two queues' below among them), Chromium (playwright-core, the flags of playwright.config.ts,
// 1440×900) signs in as a reviewer through the form and clicks, --rounds times (two more first,
// not counted): overview → outcomes filtered (unknown writes) → a record → its incident → the
// queue → a request → tools → account → the header search (a request reference typed, Enter).
// Each navigation is timed in the page, from the input event to the frame that shows the new
// page's named content (bench/lib/browser.ts); the ceiling is the same measure of a client
// navigation between two pages of a bare Next.js app, in the same run. A reader pauses --pause-ms
// between navigations. First, before the other pending requests are staged: two queues of
// --queue-pending requests each, one whose requests carry arguments and one whose do not, each the
// queue of its own reviewer (bench/lib/queues.ts); Account → the queue is timed for both in
// alternating order, --queue-rounds times, and the difference of their p95s is held against the
// spread of the p95s of the queue without arguments over three groups of rounds (the noise).
// Exits non-zero on errors, never on a missed target.
import { chromium, type Locator, type Page } from 'playwright-core';
import { ensureMonths, loadOutcomes, settle, stagePending } from './lib/data';
import { QUEUES, showsArguments, stageQueues, timeQueues, type Queue } from './lib/queues';
import { installProbe, startBareNext, timeNavigation } from './lib/browser';
import { fmt, int, log, p, prng, readFlags, report, type Figure } from './lib/report';
import { createApiKey, createUser, freshDatabase, newSecret, onCleanup, runMain, startConsole } from './lib/setup';

const flags = readFlags(
  {
    records: [1_000_000, 20_000],
    pending: [10_000, 2_000],
    rounds: [30, 5],
    'pause-ms': [300, 300],
    'queue-pending': [1_000, 1_000],
    'queue-rounds': [60, 12],
  },
  ['chromium'],
);
const WARM_ROUNDS = 2;
const REPEATS = 3; // the queues' rounds, in this many groups: their p95s' spread is the noise
const SEARCH = 'header search → incident';

// ── Selectors: the only place that knows the UI ──────────────────────────────────────────────
// Every element is found by what a person relies on too: a link by the URL it opens, a heading or
// button by its role and name, the search box by its label; no CSS classes, no test ids. `click`
// lists candidates, the first present is used (the round's n-th match with `nth`); `shown` must
// all be visible and new since the input.
type Step = { name: string; click: (p: Page) => Locator[]; nth?: boolean; shown: (p: Page, href: string) => Locator[] };
const main = (p: Page) => p.getByRole('main');
const h1 = (p: Page, name?: string) => p.getByRole('heading', { level: 1, ...(name ? { name, exact: true } : {}) });
const incidentShown = (p: Page, ref: string) => [h1(p, ref), main(p).getByRole('heading', { name: /^Timeline\b/ })];
const UNKNOWN_WRITES = 'a[href^="/outcomes?"][href*="delivery=unknown"]';
const STEPS: Step[] = [
  {
    name: 'overview',
    click: (p) => [p.locator('a[href="/"]')],
    shown: (p) => [h1(p, 'Overview'), main(p).locator(UNKNOWN_WRITES)],
  },
  {
    name: 'outcomes, filtered (unknown writes)',
    click: (p) => [main(p).locator(UNKNOWN_WRITES)],
    shown: (p) => [h1(p, 'Outcomes'), main(p).locator('a[href^="/outcomes/"]')],
  },
  {
    name: 'a record',
    click: (p) => [main(p).locator('a[href^="/outcomes/"]')],
    nth: true,
    shown: (p) => [h1(p), main(p).locator('a[href^="/incidents/"]')],
  },
  {
    name: 'its incident',
    click: (p) => [main(p).locator('a[href^="/incidents/"]')],
    shown: (p, href) => incidentShown(p, decodeURIComponent(href.replace(/^\/incidents\//, ''))),
  },
  {
    name: 'the queue',
    click: (p) => [p.locator('a[href="/approvals"]')],
    shown: (p) => [h1(p, 'Approvals'), main(p).locator('a[href^="/approvals/"]')],
  },
  {
    name: 'a request',
    click: (p) => [main(p).locator('a[href^="/approvals/"]')],
    nth: true,
    shown: (p) => [h1(p), main(p).getByRole('button', { name: /^approve/i })],
  },
  { name: 'tools', click: (p) => [p.locator('a[href="/admin/tools"]')], shown: (p) => [h1(p, 'Tools')] },
  { name: 'account', click: (p) => [p.locator('a[href="/account"]')], shown: (p) => [h1(p, 'Account')] },
];
const searchBox = (p: Page) => p.getByRole('searchbox', { name: /incident/i }).first(); // the header's
// ──────────────────────────────────────────────────────────────────────────────────────────────

async function target(page: Page, step: Step, round: number): Promise<Locator> {
  for (const c of step.click(page)) {
    const visible = c.filter({ visible: true });
    const n = await visible.count();
    if (n) return visible.nth(step.nth ? round % n : 0);
  }
  const first = step.click(page)[0].filter({ visible: true }).first();
  await first.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => {
    throw new Error(`${step.name}: nothing to click on ${page.url()}`);
  });
  return first;
}

runMain(async () => {
  const db = await freshDatabase(flags.databaseUrl);
  const first = await ensureMonths(db.sql, 1, 3);
  const start = Math.max(first.getTime(), Date.now() - 30 * 86_400_000);
  log(`loading ${int(flags.records)} records over the last 30 days…`);
  await loadOutcomes(db.sql, flags.records, new Date(start), Math.floor((Date.now() - start) / 1000) - 3_600, 's-');
  await settle(db.sql);
  const password = newSecret();
  const secret = newSecret();
  createUser(db, { email: 'reviewer@bench.local', role: 'reviewer', password, principal: 'bench-reviewer' });
  createApiKey(db, ['approvals:request'], 'bench-gateway');
  const key = (await db.sql.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'bench-gateway'`)).rows[0].id;
  const reviewers = await stageQueues(db, { AUTH_SECRET: secret }, key, flags['queue-pending'], password);
  const app = await startConsole({ DATABASE_URL: db.url, AUTH_SECRET: secret });

  const browser = await chromium.launch({
    executablePath: flags.chromium ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
  });
  onCleanup('close Chromium', () => browser.close());
  const signedIn = async (email: string) => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: app.origin });
    const page = await context.newPage();
    await installProbe(page);
    log(`signing in as ${email}…`);
    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'), { timeout: 30_000 });
    return { context, page };
  };

  // The two queues first, while they are the only requests pending.
  const queuePages = {} as Record<Queue, Page>;
  for (const q of QUEUES) queuePages[q] = (await signedIn(reviewers[q])).page;
  log(`the two queues: ${flags['queue-rounds']} rounds (+2 not counted), alternating…`);
  const queues = await timeQueues(queuePages, flags['queue-rounds'], flags['pause-ms']);
  for (const q of QUEUES)
    if ((await showsArguments(queuePages[q])) !== (q === 'with arguments'))
      throw new Error(`the queue ${q} ${q === 'with arguments' ? 'shows no' : 'shows'} argument previews`);
  for (const q of QUEUES) await queuePages[q].context().close();

  await stagePending(db.sql, key, Math.max(0, flags.pending - 2 * flags['queue-pending']));
  const { context, page } = await signedIn('reviewer@bench.local');
  const random = prng(17);
  const times = new Map<string, number[]>([...STEPS.map((s): [string, number[]] => [s.name, []]), [SEARCH, []]]);
  await page.goto('/admin/tools'); // not the first step's page
  log(`${flags.rounds} rounds (+${WARM_ROUNDS} not counted) of ${STEPS.length + 1} navigations…`);
  for (let round = 0; round < WARM_ROUNDS + flags.rounds; round++) {
    const keep = (name: string, ms: number) => round >= WARM_ROUNDS && times.get(name)!.push(ms);
    for (const step of STEPS) {
      const link = await target(page, step, round);
      const href = (await link.getAttribute('href')) ?? '';
      keep(step.name, await timeNavigation(page, () => link.click(), href, step.shown(page, href), step.name));
      await page.waitForTimeout(flags['pause-ms']);
    }
    const ref = `s-req-${Math.floor(random() * (flags.records / 4))}`;
    await searchBox(page).fill(ref);
    const to = `/incidents/${encodeURIComponent(ref)}`;
    keep(
      SEARCH,
      await timeNavigation(page, () => searchBox(page).press('Enter'), to, incidentShown(page, ref), SEARCH),
    );
    await page.waitForTimeout(flags['pause-ms']);
  }
  await app.stop();

  // The ceiling: client navigations (next/link) between the bare app's two pages, same browser.
  const bare = await context.newPage();
  await installProbe(bare);
  await bare.goto(`${await startBareNext()}/a`);
  const floor: number[] = [];
  log('the bare Next.js app…');
  for (let k = 0; k < 2 * (WARM_ROUNDS + flags.rounds); k++) {
    const to = k % 2 ? 'A' : 'B';
    const link = bare.getByRole('link', { name: `To page ${to}`, exact: true });
    const ms = await timeNavigation(
      bare,
      () => link.click(),
      `/${to.toLowerCase()}`,
      [h1(bare, `Bare page ${to}`)],
      `bare ${to}`,
    );
    if (k >= 2 * WARM_ROUNDS) floor.push(ms);
    await bare.waitForTimeout(flags['pause-ms']);
  }

  const figures: Figure[] = [...times].map(([name, ms]) => ({
    name: `${name}: p95`,
    value: p(ms).p95,
    unit: 'ms',
    note: `p50 ${p(ms).p50.toFixed(0)} ms`,
    ceiling: { name: 'bare Next.js navigation p95', value: p(floor).p95, unit: 'ms' },
    target: { op: '≤', value: name === SEARCH ? 300 : 200, unit: 'ms' },
  }));
  // The two queues: with arguments against without, beside the spread between repeated rounds.
  const byRound = (ms: number[]) =>
    Array.from(
      { length: REPEATS },
      (_, g) => p(ms.slice(...[g, g + 1].map((k) => Math.floor((k * ms.length) / REPEATS)))).p95,
    );
  const [withArgs, without] = QUEUES.map((q) => p(queues[q]));
  const [roundsWith, roundsWithout] = QUEUES.map((q) => byRound(queues[q]));
  const listed = (ps: number[]) => ps.map((v) => fmt(v, 'ms')).join(', ');
  const noise = Math.max(...roundsWithout) - Math.min(...roundsWithout);
  figures.push(
    {
      name: `the queue, ${int(flags['queue-pending'])} pending with arguments: p95`,
      value: withArgs.p95,
      unit: 'ms',
      note: `p50 ${withArgs.p50.toFixed(0)} ms; p95 by round ${listed(roundsWith)}`,
      ceiling: { name: 'the same without arguments, p95', value: without.p95, unit: 'ms' },
    },
    {
      name: '  with arguments − without, p95',
      value: withArgs.p95 - without.p95,
      unit: 'ms',
      note: `without: p50 ${without.p50.toFixed(0)} ms, p95 by round ${listed(roundsWithout)}`,
      ceiling: { name: 'noise: the spread of the rounds without', value: noise, unit: 'ms' },
      target: { op: '≤', value: noise, unit: 'ms' },
    },
  );
  report('ui', db.pgVersion, { ...flags, browser: 'Chromium, 1440×900' }, figures);
});
