// Slack-compatible messages (incoming webhooks) for webhook events. Pure. A message names the
// request (tool, server, reference, on whose behalf), says what happened and links to it; it
// never carries arguments, secrets or free text, masked or not (docs/design.md "Notifications").
import type { WebhookEvent, WebhookEventData } from './events';

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
function headline(type: WebhookEvent['type'], d: WebhookEventData): { title: string; text: string } {
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

export function slackMessage(event: Pick<WebhookEvent, 'type' | 'data'>, base: string): SlackMessage {
  const link = approvalLink(event.data, base);
  const { title, text } = headline(event.type, event.data);
  return {
    text: `${title}: ${text} ${link}`,
    blocks: [
      {
        type: 'header',
        text: { type: 'plain_text', text: plain(`${title}: ${event.data.tool} on ${event.data.server}`) },
      },
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'section', fields: facts(event.data) },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|Open in Countersign>` } },
    ],
  };
}
