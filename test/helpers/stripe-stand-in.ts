/** A local HTTP stand-in for Stripe's API, for the stripe package to talk to in tests: Checkout Sessions only. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StripeStandIn {
  url: string;
  /** The form-encoded bodies of the Checkout Sessions created, decoded. */
  sessions: URLSearchParams[];
  close(): Promise<void>;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const sessions: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        const form = new URLSearchParams(body);
        sessions.push(form);
        const id = `cs_test_${sessions.length}`;
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${sessions.length}` });
        res.end(
          JSON.stringify({ id, object: 'checkout.session', url: `https://checkout.stripe.test/pay/${id}`, payment_status: 'unpaid' }),
        );
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
