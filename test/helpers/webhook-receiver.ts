/** A real HTTP webhook receiver on loopback: records each delivery (raw body, signature), answers as told. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  body: string;
  signature: string | undefined;
  contentType: string | undefined;
  /** The parsed body: one event, or for a CloudEvents batch an array of them. */
  event: { id: string; type: string; data: Record<string, unknown> } & Record<string, unknown>;
}

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** The status answered from now on (default 200). */
  answer: number;
  /** While set, requests are held unanswered (and not recorded); called with each held request's body. */
  hold?: (body: string) => void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<WebhookReceiver> {
  const receiver: Partial<WebhookReceiver> & { received: Received[]; answer: number } = { received: [], answer: 200 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (receiver.hold) return receiver.hold(body);
      if (receiver.answer >= 200 && receiver.answer < 300) {
        const signature = req.headers['tokenmeter-signature'] as string | undefined;
        const contentType = req.headers['content-type'];
        receiver.received.push({ body, signature, contentType, event: JSON.parse(body) as Received['event'] });
      }
      res.writeHead(receiver.answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver as WebhookReceiver;
}
