// `npm run bench:ui`: speed people feel, in a real browser. On a fresh database (bench/lib/setup.ts,
// dropped afterwards) holding BENCH_UI_RECORDS outcome records (bench/lib/lookup-data.ts: COPY of
// the demo stories over request references, organizations, principals and 30 days, classified by
// the shared classifier) and BENCH_UI_PENDING pending approval requests (bench/lib/approval-data.ts),
// Chromium (playwright-core, /usr/bin/chromium, the flags of playwright.config.ts, 1440×900)
// signs in as a reviewer through the sign-in form and clicks, BENCH_UI_ROUNDS times:
//   overview → outcomes with a filter (unknown writes) → a record → its incident → the queue →
//   a request → tools → account → the header search (a request reference typed, Enter) → that incident.
// Each navigation is timed in the page from the input event (click or Enter) to the animation
// frame that shows the new page's named content (bench/lib/ui-timing.ts), with the time to first
// byte of its own document/RSC request beside it (the server's share) and the same navigations of
// a bare Next.js app (bench/lib/bare-next.ts: the framework's floor). Two warm-up rounds are not
// counted; between navigations the "reader" pauses BENCH_UI_PAUSE_MS, as a person reads.
// Reports; exits non-zero only on real errors (set-up failures, content that never showed).
//   BENCH_UI_RECORDS (1000000)  BENCH_UI_REFS (records ÷ 10)  BENCH_UI_PENDING (10000)
//   BENCH_UI_ROUNDS (30)  BENCH_UI_PAUSE_MS (300)  BENCH_UI_HEADED=1 shows the browser
//   BENCH_CPU_PROFILE=<dir>: the console writes a V8 .cpuprofile there (open in Chrome DevTools)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Locator, type Page } from 'playwright-core';
import { stagePendingQueue } from './lib/approval-data';
import { startBareNext } from './lib/bare-next';
import { cpuMeter, describeCpu, type CpuShare } from './lib/cpu';
import { loadLookupData, refName } from './lib/lookup-data';
import { envNumber, int, load1, log, machine, ms, prng, runMain, stats, table, verdict } from './lib/report';
import { cleanup, createApiKey, createUser, onCleanup, setUpBench } from './lib/setup';
import { installProbe, timeNavigation, type Navigation } from './lib/ui-timing';

// ── Selectors: the only place that knows the UI ──────────────────────────────────────────────
// Other work changes the shell and the pages, so every element is found by something a person
// relies on too: a link by the URL it opens (stable while the routes are), a heading or button
// by its role and accessible name, the search box by its role and label. No CSS classes, no DOM
// shape, no test ids. `click` lists candidates, the first one present on the page is used (the
// n-th visible match, to open a different row each round); `shown` must all be visible, and must
// be new since the input (bench/lib/ui-timing.ts refuses content that was already there).
// If a page changes so that a selector no longer fits, change it here and nowhere else.
type Ctx = { round: number; href: string };
type Step = {
  name: string;
  click: (p: Page) => Locator[];
  /** Pick the round's row (else the first match). */
  nth?: boolean;
  shown: (p: Page, ctx: Ctx) => Locator[];
};
const inMain = (p: Page) => p.getByRole('main');
const h1 = (p: Page, name?: string | RegExp) =>
  p.getByRole('heading', { level: 1, ...(name ? { name, exact: typeof name === 'string' } : {}) });
const incidentShown = (p: Page, ref: string) => [h1(p, ref), inMain(p).getByRole('heading', { name: /^Timeline\b/ })];

const UI = {
  signIn: {
    url: '/sign-in',
    email: (p: Page) => p.getByLabel('Email'),
    password: (p: Page) => p.getByLabel('Password'),
    submit: (p: Page) => p.getByRole('button', { name: 'Sign in', exact: true }),
  },
  /** The header's incident search (the incidents page has a second box: the first one is the header's). */
  search: (p: Page) => p.getByRole('searchbox', { name: /incident/i }).first(),
  /** A page to start from that is not the first step's (it must leave a different page). */
  start: '/admin/tools',
  steps: [
    {
      name: 'overview',
      click: (p) => [p.locator('a[href="/"]')], // the logo or the Overview navigation item
      shown: (p) => [h1(p, 'Overview'), inMain(p).locator('a[href^="/outcomes?"][href*="delivery=unknown"]')],
    },
    {
      name: 'outcomes, filtered (unknown writes)',
      click: (p) => [inMain(p).locator('a[href^="/outcomes?"][href*="delivery=unknown"]')], // the "Unknown" tiles
      shown: (p) => [h1(p, 'Outcomes'), inMain(p).locator('a[href^="/outcomes/"]')],
    },
    {
      name: 'a record',
      click: (p) => [inMain(p).locator('a[href^="/outcomes/"]')],
      nth: true,
      shown: (p) => [h1(p), inMain(p).locator('a[href^="/incidents/"]')],
    },
    {
      name: 'its incident',
      click: (p) => [inMain(p).locator('a[href^="/incidents/"]')],
      shown: (p, { href }) => incidentShown(p, decodeURIComponent(href.replace(/^\/incidents\//, ''))),
    },
    {
      name: 'the queue',
      click: (p) => [p.locator('a[href="/approvals"]')], // the navigation item
      shown: (p) => [h1(p, 'Approvals'), inMain(p).locator('a[href^="/approvals/"]')],
    },
    {
      name: 'a request',
      click: (p) => [inMain(p).locator('a[href^="/approvals/"]')],
      nth: true,
      shown: (p) => [h1(p), inMain(p).getByRole('button', { name: /^approve/i })],
    },
    {
      name: 'tools',
      click: (p) => [p.locator('a[href="/admin/tools"]')], // the navigation item
      shown: (p) => [h1(p, 'Tools')], // the page's own heading (its loading skeleton has none)
    },
    {
      name: 'account',
      click: (p) => [p.locator('a[href="/account"]')], // the navigation item
      shown: (p) => [h1(p, 'Account')],
    },
  ] satisfies Step[],
  bare: {
    soft: (p: Page, to: string) => p.getByRole('link', { name: `To page ${to}`, exact: true }),
    full: (p: Page, to: string) => p.getByRole('link', { name: `Full load of page ${to}`, exact: true }),
    shown: (p: Page, to: string) => [h1(p, `Bare page ${to}`)],
  },
};
// ──────────────────────────────────────────────────────────────────────────────────────────────

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RECORDS = envNumber('BENCH_UI_RECORDS', 1_000_000);
const REFS = envNumber('BENCH_UI_REFS', Math.max(1, Math.round(RECORDS / 10)));
const PENDING = envNumber('BENCH_UI_PENDING', 10_000);
const ROUNDS = envNumber('BENCH_UI_ROUNDS', 30);
const PAUSE_MS = envNumber('BENCH_UI_PAUSE_MS', 300);
const WARMUP_ROUNDS = 2;
const TARGET = { navP95Ms: 200, searchP95Ms: 300 };
const SEARCH = 'header search → incident';
// As in playwright.config.ts.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const debug = process.env.BENCH_UI_DEBUG ? (s: string) => log(`debug: ${s}`) : () => {};
const pause = () => new Promise((r) => setTimeout(r, PAUSE_MS));

/** The first candidate present on the page, visible; the `k`-th match if `nth`. */
async function target(p: Page, step: Step, round: number): Promise<Locator> {
  for (const c of step.click(p)) {
    const visible = c.filter({ visible: true });
    const n = await visible.count();
    if (n) return visible.nth(step.nth ? round % n : 0);
  }
  // Wait a little for the first candidate (a page still settling), then give up with its name.
  const first = step.click(p)[0].filter({ visible: true }).first();
  await first.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => {
    throw new Error(`${step.name}: nothing to click on ${p.url()} (${step.click(p).join(' | ')})`);
  });
  return first;
}

type Sample = { step: string; nav: Navigation };

async function main(): Promise<number> {
  const password = randomBytes(12).toString('base64url');
  const reviewerEmail = 'reviewer@bench.local';
  const { startLoad, db, sql, pgVersion, app, prepared } = await setUpBench(root, async ({ db: { url }, sql }) => {
    log(`loading ${int(RECORDS)} outcome records over ${int(REFS)} request references (load ${load1()})…`);
    const { timings } = await loadLookupData(url, { records: RECORDS, refs: REFS, progress: log });
    createUser(root, url, { email: reviewerEmail, role: 'reviewer', password, principal: 'bench-reviewer' });
    createUser(root, url, {
      email: 'reviewer2@bench.local',
      role: 'reviewer',
      password,
      principal: 'bench-reviewer-2',
    });
    createApiKey(root, url, ['approvals:request'], 'bench-gateway');
    const other = (
      await sql.query<{ id: string; email: string; principal: string }>(
        `SELECT id, email, principal_id AS principal FROM users WHERE email = 'reviewer2@bench.local'`,
      )
    ).rows[0];
    const gatewayId = (await sql.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'bench-gateway'`)).rows[0]
      .id;
    log(`staging ${int(PENDING)} pending approval requests…`);
    await stagePendingQueue(sql, { keyId: gatewayId, reviewer: other, count: PENDING, tag: 'queue' });
    for (const t of ['approval_requests', 'approval_decisions']) await sql.query(`VACUUM (ANALYZE) ${t}`);
    return { timings };
  });
  const { timings } = prepared;
  const pending = (
    await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM approval_requests WHERE status = 'pending'`)
  ).rows[0].n;

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: !process.env.BENCH_UI_HEADED,
  });
  onCleanup('close Chromium', () => browser.close());
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: app.origin });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  if (process.env.BENCH_UI_DEBUG) page.on('console', (m) => debug(`console.${m.type()}: ${m.text()}`));
  await installProbe(page);

  // Sign in through the form, as a reviewer does.
  log(`signing in as ${reviewerEmail} in Chromium…`);
  await page.goto(UI.signIn.url);
  await UI.signIn.email(page).fill(reviewerEmail);
  await UI.signIn.password(page).fill(password);
  await UI.signIn.submit(page).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'), { timeout: 30_000 });

  const random = prng(17);
  const searchRefs = Array.from({ length: ROUNDS + WARMUP_ROUNDS }, () => refName(Math.floor(random() * REFS)));
  const samples: Sample[] = [];
  let measureLoad = '';
  let meter: ReturnType<typeof cpuMeter> = null;
  await page.goto(UI.start);
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    if (round === WARMUP_ROUNDS) {
      measureLoad = load1();
      log(`measuring ${ROUNDS} rounds of ${UI.steps.length + 1} navigations (load ${measureLoad})…`);
      meter = cpuMeter(app.pid);
    }
    const keep = (step: string, nav: Navigation) => round >= WARMUP_ROUNDS && samples.push({ step, nav });
    for (const step of UI.steps as Step[]) {
      debug(`round ${round}: ${step.name} from ${page.url()}`);
      const link = await target(page, step, round);
      const href = (await link.getAttribute('href')) ?? '';
      const nav = await timeNavigation(page, () => link.click(), href, step.shown(page, { round, href }), step.name);
      keep(step.name, nav);
      await pause();
    }
    // The header search: the reference typed (not timed), then Enter.
    const ref = searchRefs[round];
    const box = UI.search(page);
    await box.fill(ref);
    keep(
      SEARCH,
      await timeNavigation(
        page,
        () => box.press('Enter'),
        `/incidents/${encodeURIComponent(ref)}`,
        incidentShown(page, ref),
        SEARCH,
      ),
    );
    await pause();
  }
  const cpu: CpuShare | undefined = meter?.stop();
  const afterLoad = load1();
  await page.close();
  await app.stop();

  // The framework's floor, same browser, same measurement.
  let bare: { soft: Navigation[]; full: Navigation[]; load: string } | { error: string };
  try {
    const bareApp = await startBareNext(root, log);
    const bp = await context.newPage();
    await installProbe(bp);
    await bp.goto(`${bareApp.origin}/a`);
    const soft: Navigation[] = [];
    const full: Navigation[] = [];
    log(`bare Next.js app: ${ROUNDS} × 2 client navigations and 2 document loads (load ${load1()})…`);
    for (let k = 0; k < WARMUP_ROUNDS + ROUNDS; k++) {
      for (const [kind, list] of [
        ['soft', soft],
        ['full', full],
      ] as const) {
        for (const to of ['B', 'A']) {
          const link = UI.bare[kind](bp, to);
          const nav = await timeNavigation(
            bp,
            () => link.click(),
            `/${to.toLowerCase()}`,
            UI.bare.shown(bp, to),
            `bare ${kind} ${to}`,
          );
          if (k >= WARMUP_ROUNDS) list.push(nav);
          await pause();
        }
      }
    }
    bare = { soft, full, load: load1() };
    await bp.close();
    await bareApp.stop();
  } catch (err) {
    bare = { error: err instanceof Error ? err.message.split('\n')[0] : String(err) };
  }
  await browser.close();
  await sql.end();

  // ── Report ────────────────────────────────────────────────────────────────────────────────
  const names = [...(UI.steps as Step[]).map((s) => s.name), SEARCH];
  const of = (name: string) => samples.filter((s) => s.step === name).map((s) => s.nav);
  const pick = (navs: Navigation[], f: (n: Navigation) => number | null) =>
    stats(navs.flatMap((n) => (f(n) === null ? [] : [f(n)!])));
  const row = (name: string, navs: Navigation[], target: number | null) => {
    const total = stats(navs.map((n) => n.ms));
    const ttfb = pick(navs, (n) => n.ttfbMs);
    const answer = pick(navs, (n) => n.answerMs);
    const after = pick(navs, (n) => n.afterAnswerMs);
    return [
      name,
      ms(total.p50),
      ms(total.p95),
      ms(total.max),
      ms(ttfb.p50),
      ms(answer.p50),
      ms(answer.p95),
      ms(after.p50),
      `${navs.filter((n) => n.answerMs !== null).length}/${navs.length}`,
      target === null ? '' : `${verdict(total.p95 <= target)} (≤ ${target} ms)`,
    ];
  };
  const head = [
    'navigation',
    'p50',
    'p95',
    'max',
    'TTFB p50',
    'answer p50',
    'answer p95',
    'after answer p50',
    'timed',
    'target p95',
  ];
  const all = names.flatMap(of);
  const misses = names.filter((n) => {
    const t = n === SEARCH ? TARGET.searchP95Ms : TARGET.navP95Ms;
    return stats(of(n).map((x) => x.ms)).p95 > t;
  });

  console.log(`
Countersign UI benchmark: speed people feel (Chromium, 1440×900)
  machine   ${machine(pgVersion)}
  database  ${db.where}
  data      ${int(RECORDS)} outcome records over ${int(REFS)} request references (${(timings.tableBytes / 2 ** 30).toFixed(2)} GiB table, ${(timings.indexBytes / 2 ** 30).toFixed(2)} GiB indexes); ${int(pending)} pending approval requests
  load      COPY ${timings.generateAndCopy.toFixed(0)} s, index builds ${timings.indexes.toFixed(0)} s, VACUUM ANALYZE ${timings.vacuum.toFixed(0)} s
  load avg  ${startLoad} at start, ${measureLoad} when measuring began, ${afterLoad} after the rounds, ${'error' in bare ? '–' : bare.load} after the bare app (1 min; ${'2'} cores shared with other work)
  rounds    ${ROUNDS} measured (+${WARMUP_ROUNDS} warm-up), ${PAUSE_MS} ms pause between navigations
  timing    input event (click / Enter) → the animation frame showing the named content, measured in the page;
            answer = the navigation's own document/RSC request(s), sent → last byte (the server streams as it
            renders, so this, not TTFB, is its time; prefetches excluded); after answer = last byte → shown
            (the browser's share; negative when shown while still streaming); timed = navigations whose own
            requests were timed (a document by Navigation Timing, the router's RSC fetch by the browser's
            network events, also when the router cancels it after reading: bench/lib/ui-timing.ts)

${table([
  head,
  ...names.map((n) => row(n, of(n), n === SEARCH ? TARGET.searchP95Ms : TARGET.navP95Ms)),
  row('all navigations', all, null),
  ...('error' in bare
    ? [['bare Next.js page (the framework floor)', `not measured: ${bare.error}`, '', '', '', '', '', '', '', '']]
    : [
        row('bare Next.js: client navigation (Link)', bare.soft, null),
        row('bare Next.js: document load (<a>)', bare.full, null),
      ]),
])}${cpu ? `\n  while measuring, ${describeCpu(cpu).replace('load generator', 'this process')} (Chromium is in "other")` : ''}

${table([
  ['target', 'measured', ''],
  ...names.map((n) => {
    const t = n === SEARCH ? TARGET.searchP95Ms : TARGET.navP95Ms;
    const p95 = stats(of(n).map((x) => x.ms)).p95;
    return [`${n}: p95 ≤ ${t} ms`, ms(p95), verdict(p95 <= t)];
  }),
])}
${
  misses.length
    ? `\nWhere the missing time goes (p50): server = its answer (sent → last byte), browser = after the answer, before = input → request sent (router, unload, redirects).\n${table(
        [
          ['navigation', 'total', 'server (answer)', 'browser (after answer)', 'before and between', 'dominant'],
          ...misses.map((n) => {
            const navs = of(n);
            const total = pick(navs, (x) => x.ms).p50;
            const server = pick(navs, (x) => x.answerMs).p50;
            const browserMs = pick(navs, (x) => x.afterAnswerMs).p50;
            return [
              n,
              ms(total),
              ms(server),
              ms(browserMs),
              ms(total - server - Math.max(0, browserMs)),
              server >= Math.max(0, browserMs) ? 'server' : 'browser',
            ];
          }),
        ],
      )}`
    : ''
}`);
  return 0;
}

runMain(main, cleanup);
