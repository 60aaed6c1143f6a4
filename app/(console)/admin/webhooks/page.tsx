import Link from 'next/link';
import { CreateWebhookForm } from '@/components/admin/webhook-form';
import { ConfirmButton } from '@/components/ui/confirm-button';
import { Badge, Card, EmptyState, PageHeader } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { WEBHOOK_HISTORY_DAYS } from '@/lib/webhooks/retry';
import { listWebhookDeliveries, listWebhookEndpoints, type EndpointView } from '@/lib/server/webhooks/webhooks';
import { requireViewer } from '@/lib/server/auth/session';
import { formatDate } from '@/lib/format';
import { firstValues } from '@/lib/url';
import { deleteWebhookAction, redeliverAction, setWebhookEnabledAction } from './actions';

export const metadata = { title: 'Webhooks' };

const statusTone = { pending: 'warn', delivered: 'good', dead: 'bad' } as const;

export default async function WebhooksPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const viewer = await requireViewer('webhooks.manage');
  const endpoints = await listWebhookEndpoints(viewer);
  if (!endpoints.ok) throw new Error('listWebhookEndpoints refused an admin');
  const { endpoint } = firstValues(await searchParams);
  const shown = endpoints.value.find((e) => e.id === endpoint) ?? endpoints.value[0];
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Every approval event is written to an outbox with the change and delivered at least once to each endpoint subscribed to it, with retries and a dead letter. Messages name the request and link to it; never arguments, secrets or free text."
      />
      <div className="space-y-6">
        <Card title="Add an endpoint">
          <CreateWebhookForm />
        </Card>
        {endpoints.value.length === 0 ? (
          <EmptyState title="No endpoints yet">Add one above, or set COUNTERSIGN_WEBHOOK_URL.</EmptyState>
        ) : (
          <Table
            head={['Endpoint', 'Format', 'Events', 'Deliveries', { label: 'Actions', hidden: true }]}
            caption="Webhook endpoints"
          >
            {endpoints.value.map((e) => (
              <EndpointRow key={e.id} e={e} selected={e.id === shown?.id} />
            ))}
          </Table>
        )}
        {shown ? <Deliveries endpoint={shown} /> : null}
      </div>
    </>
  );
}

function EndpointRow({ e, selected }: { e: EndpointView; selected: boolean }) {
  const host = new URL(e.url).host;
  return (
    <tr data-testid={`webhook-row-${host}`} className={selected ? 'bg-slate-50' : undefined}>
      <Td>
        <Link className="font-medium text-indigo-600 hover:underline" href={`/admin/webhooks?endpoint=${e.id}`}>
          {host}
        </Link>
        <span className="block text-xs text-slate-500">
          {e.fromEnvironment ? 'from COUNTERSIGN_WEBHOOK_URL' : `by ${e.createdBy}`} · {formatDate(e.createdAt)}
        </span>
        {e.enabled ? null : <Badge tone="bad">off</Badge>}
      </Td>
      <Td>{e.format}</Td>
      <Td>
        <div className="flex flex-wrap gap-1">
          {e.events.map((t) => (
            <Badge key={t}>{t}</Badge>
          ))}
        </div>
      </Td>
      <Td className="text-xs">
        {e.counts.delivered} delivered · {e.counts.pending} pending · {e.counts.dead} dead
      </Td>
      <Td className="space-x-2 text-right">
        <ConfirmButton
          label={e.enabled ? 'Turn off' : 'Turn on'}
          variant="secondary"
          confirm={e.enabled ? `Turn off ${host}? New events are not sent to it.` : `Turn on ${host}?`}
          run={setWebhookEnabledAction.bind(null, e.id, !e.enabled)}
        />
        {e.fromEnvironment ? null : (
          <ConfirmButton
            label="Delete"
            confirm={`Delete ${host} and its delivery history?`}
            run={deleteWebhookAction.bind(null, e.id)}
          />
        )}
      </Td>
    </tr>
  );
}

async function Deliveries({ endpoint }: { endpoint: EndpointView }) {
  const viewer = await requireViewer('webhooks.manage');
  const list = await listWebhookDeliveries(viewer, endpoint.id);
  if (!list.ok) throw new Error('listWebhookDeliveries refused an admin');
  return (
    <Card
      title={`Deliveries to ${new URL(endpoint.url).host}`}
      description={`Delivered and dead letters are kept ${WEBHOOK_HISTORY_DAYS} days; one still pending stays until it settles.`}
    >
      {list.value.length === 0 ? (
        <p className="text-sm text-slate-500">None yet.</p>
      ) : (
        <Table
          head={['Event', 'Status', 'Attempts', 'Last error', 'Next attempt', { label: 'Actions', hidden: true }]}
          caption="Deliveries"
        >
          {list.value.map((d) => (
            <tr key={d.id} data-testid={`delivery-${d.id}`}>
              <Td>
                {d.approvalId ? (
                  <Link
                    className="font-mono text-xs text-indigo-600 hover:underline"
                    href={`/approvals/${d.approvalId}`}
                  >
                    {d.eventType}
                  </Link>
                ) : (
                  <Link className="font-mono text-xs text-indigo-600 hover:underline" href="/admin/tools">
                    {d.eventType}
                  </Link>
                )}
                <span className="block text-xs text-slate-500">{formatDate(d.createdAt)}</span>
              </Td>
              <Td>
                <Badge tone={statusTone[d.status]}>{d.status}</Badge>
              </Td>
              <Td>{d.attempts}</Td>
              <Td className="text-xs">{d.lastError ?? <span className="text-slate-500">none</span>}</Td>
              <Td className="text-xs">{d.nextAttemptAt ? formatDate(d.nextAttemptAt) : '—'}</Td>
              <Td className="text-right">
                <ConfirmButton
                  label="Redeliver"
                  variant="secondary"
                  confirm="Send this delivery again (the same webhook-id)?"
                  run={redeliverAction.bind(null, d.id)}
                />
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
