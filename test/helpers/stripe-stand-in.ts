/** A local HTTP stand-in for Stripe's API, for the stripe package to talk to in tests: Checkout Sessions only. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The fields of a Checkout Session object that the webhook reads, as Stripe answers them. */
export interface StandInSession {
  id: string;
  object: 'checkout.session';
  url: string;
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  metadata: Record<string, string>;
}

export interface StripeStandIn {
  url: string;
  /** The form-encoded bodies of the Checkout Sessions created, decoded. */
  sessions: URLSearchParams[];
  /** The Checkout Session objects answered, in the same order. */
  created: StandInSession[];
  close(): Promise<void>;
}

/** What Stripe makes of a form: one line item's amount times its quantity, and the metadata as given. */
function sessionOf(form: URLSearchParams, id: string): StandInSession {
  const metadata: Record<string, string> = {};
  for (const [field, value] of form) {
    const m = /^metadata\[(.+)\]$/.exec(field);
    if (m) metadata[m[1]] = value;
  }
  return {
    id,
    object: 'checkout.session',
    url: `https://checkout.stripe.test/pay/${id}`,
    payment_status: 'unpaid',
    amount_total: Number(form.get('line_items[0][price_data][unit_amount]')) * Number(form.get('line_items[0][quantity]') ?? 1),
    currency: form.get('line_items[0][price_data][currency]') ?? '',
    metadata,
  };
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const sessions: URLSearchParams[] = [];
  const created: StandInSession[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        const form = new URLSearchParams(body);
        sessions.push(form);
        const session = sessionOf(form, `cs_test_${sessions.length}`);
        created.push(session);
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${sessions.length}` });
        res.end(JSON.stringify(session));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: `no route ${req.method} ${req.url}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions,
    created,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
