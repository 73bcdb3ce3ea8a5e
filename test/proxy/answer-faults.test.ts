/**
 * A non-streamed answer cut short, from either side. A JSON answer is read whole before anything is written, so one
 * cut before its end served nothing: the client gets an error (or nothing, having left) and nothing is charged. A
 * scanned answer (embeddings) was the upstream's work on the inputs however far it got: the inputs are charged.
 */
import http from 'node:http';
import request from 'supertest';
import { keyWithTokens } from '../helpers/stores';
import { settled, chatBody } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';
import type { UpstreamCall } from '../helpers/upstream';
import { eventually } from '../helpers/eventually';

const EMBED = 'acme/model-1';
const BALANCE = 10_000;

describe('non-streamed answers cut short (redis store)', () => {
  const t = proxyFixture('redis', {
    models: [{ endpoints: ['chat'] }, { endpoints: ['embeddings'], upstream_model: 'Acme/Embed-Base' }],
  });
  let key: { id: string; secret: string };
  /** Resolves with the upstream call once the stand-in has sent the first part of its answer. */
  let sent: Promise<UpstreamCall>;
  /** The stand-in sends the head and `part` of an answer, then holds (or resets its socket after `resetMs`). */
  const halfAnswer = (part: (model: string) => string, resetMs?: number) => {
    let told: (c: UpstreamCall) => void;
    sent = new Promise((resolve) => (told = resolve));
    t.upstream.behave((call, req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(part(call.body.model), () => told(call));
      if (resetMs !== undefined) setTimeout(() => req.socket.destroy(), resetMs);
    });
  };
  const chatPart = (model: string) => `{"id":"chatcmpl-1","object":"chat.completion","model":"${model}","choices":[{"index":0,"mess`;
  const embeddingsPart = (model: string) =>
    `{"object":"list","model":"${model}","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,`;
  const records = () => t.s.store.usage({ keyId: key.id, limit: 5 });
  /** A raw request whose socket the test destroys at will (its errors are the test's to read, or ignored). */
  const send = (path: string, body: object): http.ClientRequest => {
    const req = http.request(`${t.proxy.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify(body));
    return req;
  };

  beforeEach(async () => {
    key = await keyWithTokens(t.s.store, BALANCE);
  });

  it('a JSON answer whose upstream resets mid-body: 502 upstream_error, nothing charged, nothing left reserved', async () => {
    halfAnswer(chatPart, 30);
    const res = await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({
      type: 'api_error',
      code: 'upstream_error',
      message: 'The upstream closed the connection.',
    });
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: BALANCE, reserved: 0 });
    expect(await records()).toEqual([]);
  });

  it('a client that hangs up while a JSON answer is arriving: the upstream is aborted, nothing charged, nothing reserved', async () => {
    halfAnswer(chatPart);
    const client = send('/v1/chat/completions', chatBody());
    await sent;
    client.destroy();
    await t.upstream.aborted();
    await eventually(async () => expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0 }), 2_000, 'the release');
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: BALANCE, reserved: 0 });
    expect(await records()).toEqual([]);
  });

  it('an embeddings answer whose upstream resets mid-body: the client is cut off, the inputs charged once, nothing left reserved', async () => {
    halfAnswer(embeddingsPart, 30);
    const client = send('/v1/embeddings', { model: EMBED, input: 'The food was delicious.' });
    await expect(new Promise((resolve, reject) => client.on('response', resolve).on('error', reject))).rejects.toThrow(/socket hang up/);
    await settled(t.proxy);
    const [record, ...more] = await records();
    expect(more).toEqual([]);
    expect(record).toMatchObject({ endpoint: 'embeddings', estimated: true, completionTokens: 0 });
    expect(record.promptTokens).toBeGreaterThan(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: BALANCE - record.chargedTokens, reserved: 0 });
  });

  it('a client that hangs up mid-embeddings: the upstream is aborted, the inputs charged once as 499', async () => {
    halfAnswer(embeddingsPart);
    const client = send('/v1/embeddings', { model: EMBED, input: 'The food was delicious.' });
    await sent;
    client.destroy();
    await t.upstream.aborted();
    await eventually(async () => expect(await records()).toHaveLength(1), 2_000, 'the charge');
    await settled(t.proxy);
    const [record, ...more] = await records();
    expect(more).toEqual([]);
    expect(record).toMatchObject({ endpoint: 'embeddings', status: 499, estimated: true, completionTokens: 0 });
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: BALANCE - record.chargedTokens, reserved: 0 });
  });
});
