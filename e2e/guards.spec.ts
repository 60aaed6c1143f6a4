// The guards through the real server (docs/api.md "Guards"; docs/design.md "Guards at the point of
// execution"): a write whose earlier attempt is still unknown, sent along with the question as a
// gateway does, is refused outcome_unknown naming that record; the refusal is a record of its own,
// and on the incident's timeline it links to the record it points to.
import { randomBytes } from 'node:crypto';
import { expect, test } from '../testing/api-contract';
import { signIn } from '../testing/e2e';
import { bearer, record, setUpOutcomesApi, uniq, writeKey } from '../testing/outcomes-api';

setUpOutcomesApi();

test('a repeated write after an unknown: refused, recorded, and linked on the incident', async ({ page, request }) => {
  const ref = uniq('req-guard');
  const argsDigest = `sha256:${randomBytes(32).toString('hex')}`;
  const unknown = record({ requestRef: ref, argsDigest, observed: { sent: true, clientError: 'connection_lost' } });
  const question = {
    eventId: uniq('evt-guard'),
    requestRef: ref,
    organization: unknown.organization,
    principal: unknown.principal,
    server: unknown.server,
    tool: unknown.tool,
    argsDigest,
    summary: 'Refund 40.00 EUR on order 4411, again',
  };
  const res = await request.post('/api/v1/guards/check', {
    headers: bearer(writeKey),
    data: { ...question, records: [unknown] },
  });
  expect(res.status()).toBe(200);
  const answer = await res.json();
  expect(answer).toMatchObject({ decision: 'refuse', category: 'outcome_unknown', retry: 'after_state_check' });
  expect(answer.record.eventId).toBe(question.eventId);

  // Asked again with the same event id: the same refusal, nothing more stored.
  const again = await request.post('/api/v1/guards/check', { headers: bearer(writeKey), data: question });
  expect(await again.json()).toEqual(answer);

  await signIn(page, 'support', `/incidents/${ref}`);
  const items = page.getByTestId('timeline-refused-for');
  await expect(items).toHaveCount(1);
  await expect(items).toHaveText('refused because of #1');
  await items.click();
  await expect(page).toHaveURL(new RegExp(`#record-${answer.recordId}$`));
  await expect(page.getByText('1 operation not done, 1 unknown: check before repeating')).toBeVisible();
});
