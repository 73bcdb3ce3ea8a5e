/**
 * The client sees only its own model id (an alias's canonical id) in every answer and chunk, whatever name the
 * upstream answers with: a snapshot (`gpt-4o-2024-08-06`), a tag (`llama3:latest`), compressed or pretty-printed.
 */
import { keyWithTokens } from '../helpers/stores';
import { jsonReply, streamReply, PROMPT_TOKENS, type AnswerStyle } from '../helpers/upstream';
import { settled, chatBody } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const GPT = 'acme/gpt';
const LLAMA = 'acme/llama';
const models = [
  { id: GPT, upstream_model: 'gpt-4o', aliases: ['gpt'] },
  { id: LLAMA, upstream_model: 'llama3' },
];
const snapshot = (asked: string) => `${asked}-2024-08-06`;
const tagged = (asked: string) => `${asked}:latest`;

async function post(url: string, secret: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** Every `data:` JSON line of an SSE body, parsed. */
const chunks = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as { model: string; usage?: unknown });

describe('the model name the client sees', () => {
  const t = proxyFixture('memory', { models });

  const cases: [string, string, AnswerStyle['answerAs'], AnswerStyle['encoding']][] = [
    ['a snapshot name', GPT, snapshot, undefined],
    ['a tagged name, gzip-encoded', LLAMA, tagged, 'gzip'],
    ['a snapshot name, brotli-encoded', GPT, snapshot, 'br'],
    ['a tagged name, deflate-encoded', LLAMA, tagged, 'deflate'],
  ];

  it.each(cases)('JSON: %s becomes the client id', async (_name, model, answerAs, encoding) => {
    t.upstream.behave(jsonReply({ answerAs, encoding }));
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(t.proxy.url, key.secret, chatBody({ model }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).model).toBe(model);
    expect(res.text).not.toContain(answerAs!(t.upstream.calls[0].body.model));
  });

  it.each(cases)('stream: %s becomes the client id in every chunk, usage chunk included', async (_name, model, answerAs, encoding) => {
    t.upstream.behave(streamReply({ answerAs, encoding }));
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(t.proxy.url, key.secret, chatBody({ model, stream: true, stream_options: { include_usage: true } }));
    expect(res.status).toBe(200);
    const all = chunks(res.text);
    expect(all.length).toBeGreaterThan(3);
    for (const c of all) expect(c.model).toBe(model);
    expect(all[all.length - 1].usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS });
    expect(res.text).not.toContain(answerAs!(t.upstream.calls[0].body.model));
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('an alias gets the canonical id, and usage is still metered from the upstream', async () => {
    t.upstream.behave(streamReply({ answerAs: snapshot }));
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(t.proxy.url, key.secret, chatBody({ model: 'gpt', stream: true }));
    for (const c of chunks(res.text)) expect(c.model).toBe(GPT);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ model: GPT, promptTokens: PROMPT_TOKENS, estimated: false });
  });

  it('pretty-printed JSON keeps every byte but the model value, gzip-encoded too', async () => {
    for (const encoding of [undefined, 'gzip'] as const) {
      t.upstream.behave(jsonReply({ answerAs: snapshot, pretty: true, encoding }));
      const key = await keyWithTokens(t.s.store, 10_000);
      const res = await post(t.proxy.url, key.secret, chatBody({ model: GPT }));
      const body = JSON.parse(res.text);
      const expected = JSON.stringify({ ...body, model: GPT }, null, 2).replace('"model":', '"model" :') + '\n';
      expect(res.text).toBe(expected);
    }
  });
});
