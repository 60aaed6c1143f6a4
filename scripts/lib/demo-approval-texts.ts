// The longer texts of the demo approval requests (scripts/demo-approvals.ts): the tools'
// descriptions as their servers declare them in tools/list, and an e-mail body long enough that
// the request page folds it.

export const DEMO_TOOL_DESCRIPTIONS: Record<string, string> = {
  refund_payment:
    "Refunds part or all of a captured payment to the original payment method. `amount` is a decimal string in the order's currency and may not exceed what was captured. A refund cannot be undone.",
  update_shipping_address:
    'Replaces the shipping address of an order that has not shipped yet, or redirects it to a pick-up point. Fails once the order is handed to the carrier.',
  cancel_order:
    'Cancels an order that has not shipped. With refund_to_original_method, the captured payment is refunded in full.',
  delete_customer:
    "Deletes a customer's account and personal data. With erase_order_history false, orders are kept with the customer's name and addresses removed. Cannot be undone.",
  send_email:
    'Sends an e-mail to a customer from the support address. The body is plain text; attachments must already be stored in the customer file.',
  update_config:
    'Changes the live configuration of a service. Changes apply within a minute on every instance; the previous version is kept for rollback.',
};

export const DEMO_EMAIL_BODY = [
  'Dear Ms Fischer,',
  '',
  'thank you for your patience while we looked into order 5521. The courier has confirmed that the parcel was damaged in transit, so we have refunded the full amount of 86.40 EUR to the card you paid with. Depending on your bank, it can take three to five working days to appear on your statement.',
  '',
  'You do not need to send the damaged items back. If you would still like the same products, reply to this message and we will place a new order for you at no extra cost, with express delivery.',
  '',
  'The credit note for your records is attached to this e-mail. If anything is unclear, you can reach us every weekday between 8:00 and 18:00.',
  '',
  'Kind regards,',
  'Customer support, Acme',
].join('\n');
