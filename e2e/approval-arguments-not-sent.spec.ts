// A request staged without arguments, where an admin allowed that for agents that cannot send them
// (COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS=off, on a second server of its own over the same build
// and database): the queue and the request page say, in warning style, that the reviewer approves
// the agent's own description (docs/design.md "What a reviewer sees: what will run").
import { expect, test } from '@playwright/test';
import { signIn } from '../testing/e2e';
import { startConsole, type ConsoleProcess } from '../scripts/lib/console-process';
import { approvalBody, bearer, requestKey, setUpApprovalsApi, uniq } from '../testing/approvals-api';
import { expectAccessible } from '../testing/e2e-layout';

setUpApprovalsApi();

let lenient: ConsoleProcess;
test.beforeAll(async () => {
  test.setTimeout(90_000);
  lenient = await startConsole(process.cwd(), { COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: 'off' });
});
test.afterAll(async () => {
  await lenient?.stop();
});

test('without arguments, the queue and the request page warn that only the agent’s description is approved', async ({
  page,
  request,
}) => {
  const summary = `Refund order 4490 (no arguments) ${uniq('s')}`;
  // Whatever the shared body carries by default: none here.
  const { arguments: _none, ...body } = approvalBody({ summary }) as Record<string, unknown>;
  const res = await request.post(`${lenient.origin}/api/v1/approvals`, {
    headers: { ...bearer(requestKey), 'idempotency-key': uniq('idem') },
    data: body,
  });
  expect(res.status(), await res.text()).toBe(201);
  const { id } = await res.json();

  await signIn(page, 'reviewer');
  await page.goto('/approvals');
  const row = page.getByTestId('queue-row').filter({ hasText: summary });
  await expect(row.getByTestId('queue-no-arguments')).toContainText('No arguments sent: only the agent’s description');
  await expect(row.getByTestId('queue-arguments')).toHaveCount(0);

  await page.goto(`/approvals/${id}`);
  const note = page.getByTestId('arguments-note');
  await expect(note).toContainText(
    'The agent sent no arguments: you would approve its own description of the call, not the call itself.',
  );
  await expect(page.getByTestId('argument-tree')).toHaveCount(0);
  await expect(page.getByTestId('agent-words')).toHaveText(summary);
  await expectAccessible(page, 'a request without arguments');
});
