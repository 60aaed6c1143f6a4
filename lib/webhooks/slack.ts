// Slack-compatible messages (incoming webhooks) for webhook events. Pure. A message names the
// request (tool, server, reference, on whose behalf), says what happened and links to it; it
// never carries arguments, secrets or free text, masked or not (docs/design.md "Notifications").
import type { CallRefusedData, ToolChangedData, WebhookEvent, WebhookEventData } from './events';

export type SlackText = { type: 'mrkdwn' | 'plain_text'; text: string };
export type SlackBlock =
  | { type: 'header'; text: SlackText }
  | { type: 'section'; text?: SlackText; fields?: SlackText[] }
  | { type: 'context'; elements: SlackText[] };
export type SlackMessage = { text: string; blocks?: SlackBlock[] };

// Slack reads <…> as links and mentions (<!channel>) and & as an entity: identifiers must not.
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const id = (s: unknown) => escape(cut(String(s ?? ''), 200));
const plain = (s: string) => cut(s, 150);
const approvals = (n: number) => (n === 0 ? 'no approval' : n === 1 ? '1 approval' : `${n} approvals`);

export const approvalLink = (data: Pick<WebhookEventData, 'approvalId'>, base: string) =>
  `${base.replace(/\/+$/, '')}/approvals/${encodeURIComponent(data.approvalId)}`;

function facts(d: WebhookEventData): SlackText[] {
  const fields: [string, string][] = [
    ['On behalf of', `${id(d.principal)} (${id(d.organization)})`],
    ['Tool', `\`${id(d.tool)}\``],
    ['Server', `${id(d.server)}${d.annotationsTrusted ? '' : ' (untrusted)'}`],
    ['Approvals required', String(d.requiredApprovals)],
    ['Status', id(d.status)],
    ['Request reference', id(d.requestRef)],
  ];
  return fields.map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}*\n${value}` }));
}

/** Title and one-sentence headline per event type. */
function headline(
  type: Exclude<WebhookEvent['type'], 'tool.changed' | 'call.refused'>,
  d: WebhookEventData,
): { title: string; text: string } {
  const what = `${id(d.tool)} on ${id(d.server)} for ${id(d.principal)} (${id(d.organization)})`;
  const count = d.approvals ?? 0;
  switch (type) {
    case 'approval.requested':
      return {
        title: 'Approval needed',
        text: `An agent asks to run ${what}: needs ${approvals(d.requiredApprovals)}.`,
      };
    case 'approval.decided': {
      const verb = d.decision === 'deny' ? 'denied' : 'approved';
      const tally = d.decision === 'deny' ? '' : ` (${count} of ${d.requiredApprovals})`;
      return {
        title: d.decision === 'deny' ? 'Denial recorded' : 'Approval recorded',
        text: `${id(d.reviewer)} ${verb}${tally}: ${what}.`,
      };
    }
    case 'approval.approved':
      return { title: 'Approved', text: `Approved: ${what} may run once; its authorization is issued.` };
    case 'approval.denied':
      return { title: 'Denied', text: `Denied: ${what} will not run.` };
    case 'approval.expired':
      return { title: 'Expired', text: `Expired without a decision: ${what} will not run.` };
    case 'approval.revoked':
      return { title: 'Revoked', text: `Revoked by an admin: ${what} will not run.` };
    case 'grant.redeemed':
      return { title: 'Run', text: `The authorization for ${what} was used.` };
  }
}

/** Where a `tool.changed` event's tool is reviewed: the Tools page, at its server. */
export const toolLink = (data: Pick<ToolChangedData, 'server'>, base: string) =>
  `${base.replace(/\/+$/, '')}/admin/tools?server=${encodeURIComponent(data.server)}`;

/** Where a `call.refused` event is looked into: the incident of its request reference. */
export const incidentLink = (data: Pick<CallRefusedData, 'requestRef'>, base: string) =>
  `${base.replace(/\/+$/, '')}/incidents/${encodeURIComponent(data.requestRef)}`;

/** The link a message carries: the approval request; the server's tools (`tool.changed`); the incident (`call.refused`). */
export const eventLink = (event: Pick<WebhookEvent, 'type' | 'data'>, base: string) =>
  event.type === 'tool.changed'
    ? toolLink(event.data as ToolChangedData, base)
    : event.type === 'call.refused'
      ? incidentLink(event.data as CallRefusedData, base)
      : approvalLink(event.data as WebhookEventData, base);

function callRefusedMessage(d: CallRefusedData, base: string): SlackMessage {
  const link = incidentLink(d, base);
  const what = `A call of \`${id(d.tool)}\` on ${id(d.server)} was refused before it was sent (${id(d.category)}), in request ${id(d.requestRef)}: the agent must stop or change course.`;
  return {
    text: `Call refused: ${what} ${link}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: plain(`Call refused: ${d.tool} on ${d.server}`) } },
      { type: 'section', text: { type: 'mrkdwn', text: what } },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|Open the incident in Countersign>` } },
    ],
  };
}

function toolChangedMessage(d: ToolChangedData, base: string): SlackMessage {
  const link = toolLink(d, base);
  const title = d.acceptedHash ? 'Tool changed' : 'New tool held';
  const what = d.acceptedHash
    ? `The definition of \`${id(d.tool)}\` on ${id(d.server)} changed (${d.differs.map(id).join(', ') || 'definition'}): the tool is hidden until an admin accepts the change.`
    : `\`${id(d.tool)}\` is new on ${id(d.server)}, which holds new tools: it is hidden until an admin accepts it.`;
  return {
    text: `${title}: ${what} ${link}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: plain(`${title}: ${d.tool} on ${d.server}`) } },
      { type: 'section', text: { type: 'mrkdwn', text: what } },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|Review in Countersign>` } },
    ],
  };
}

export function slackMessage(event: Pick<WebhookEvent, 'type' | 'data'>, base: string): SlackMessage {
  if (event.type === 'tool.changed') return toolChangedMessage(event.data as ToolChangedData, base);
  if (event.type === 'call.refused') return callRefusedMessage(event.data as CallRefusedData, base);
  const data = event.data as WebhookEventData;
  const link = approvalLink(data, base);
  const { title, text } = headline(event.type, data);
  return {
    text: `${title}: ${text} ${link}`,
    blocks: [
      {
        type: 'header',
        text: { type: 'plain_text', text: plain(`${title}: ${data.tool} on ${data.server}`) },
      },
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'section', fields: facts(data) },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|Open in Countersign>` } },
    ],
  };
}
