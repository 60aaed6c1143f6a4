// A call's interim rounds on its record (docs/api.md `observed.rounds`, docs/gateway.md "Calls that take
// rounds"): posted through the API as a gateway posts them, read back as sent, refused when wrong or
// too many, and listed on the record page under "Rounds before the answer" (absent when there were none).
import { expect, test } from '../testing/api-contract';
import { expectProblem, signIn } from '../testing/e2e';
import { bearer, post, readKey, record, setUpOutcomesApi, writeKey } from '../testing/outcomes-api';

setUpOutcomesApi();

const ROUNDS = [
  { atMs: 0, by: 'gateway', asked: ['approval'], requests: 1 },
  { atMs: 412, by: 'server', asked: ['elicitation_form'], requests: 2 },
  { atMs: 125_400, by: 'server', asked: ['elicitation_url', 'sampling', 'roots'], requests: 3 },
];
const COMPLETED = { sent: true, result: { isError: false, outputValidation: 'valid' }, resultType: 'complete' };

test.describe('a record with rounds', () => {
  test('is stored and read back as sent; nine rounds or an unknown kind are 422 naming the field', async ({
    request,
  }) => {
    const res = await post(request, writeKey, { records: [record({ observed: { ...COMPLETED, rounds: ROUNDS } })] });
    expect(res.status()).toBe(200);
    const id = (await res.json()).records[0].id as string;
    const read = await (await request.get(`/api/v1/outcomes/${id}`, { headers: bearer(readKey) })).json();
    expect(read.observed.rounds).toEqual(ROUNDS);

    const bad: [unknown, string][] = [
      [Array.from({ length: 9 }, () => ROUNDS[1]), 'records.0.observed.rounds'],
      [[{ ...ROUNDS[1], asked: ['telepathy'] }], 'records.0.observed.rounds.0.asked.0'],
      [[{ ...ROUNDS[1], question: 'Which account?' }], 'records.0.observed.rounds.0.question'],
    ];
    for (const [rounds, path] of bad) {
      const refused = await post(request, writeKey, { records: [record({ observed: { ...COMPLETED, rounds } })] });
      await expectProblem(refused, 422, 'invalid_input');
      expect((await refused.json()).errors.map((e: { path: string }) => e.path)).toContain(path);
    }
  });

  test('lists its rounds on the record page, at 1440 and 390 px; a record without rounds has no such section', async ({
    page,
    request,
  }) => {
    const posted = await post(request, writeKey, {
      records: [record({ observed: { ...COMPLETED, rounds: ROUNDS } }), record({ observed: COMPLETED })],
    });
    const [withRounds, without] = ((await posted.json()).records as { id: string }[]).map((r) => r.id);
    await signIn(page, 'support', `/outcomes/${withRounds}`);
    await page.goto(`/outcomes/${withRounds}`);
    const list = page.getByTestId('rounds');
    await expect(page.getByRole('heading', { name: 'Rounds before the answer' })).toBeVisible();
    await expect(list.getByRole('listitem')).toHaveText([
      /\+0\.0 s\s*gateway: approval pending/,
      /\+0\.4 s\s*server asked: elicitation \(form\), 2 requests/,
      /\+2 min 5 s\s*server asked: elicitation \(URL\), sampling, roots, 3 requests/,
    ]);
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      // Nothing wider than the screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const box = await list.boundingBox();
      expect(box && box.x + box.width).toBeLessThanOrEqual(width);
      await page.screenshot({ path: test.info().outputPath(`rounds-${width}.png`), fullPage: true });
      await list.screenshot({ path: test.info().outputPath(`rounds-list-${width}.png`) });
    }
    await page.goto(`/outcomes/${without}`);
    await expect(page.getByTestId('what-happened')).toBeVisible();
    await expect(page.getByTestId('rounds')).toHaveCount(0);
    await expect(page.getByText('Rounds before the answer')).toHaveCount(0);
  });
});
