/**
 * The official openai SDK with its default retries: over a rate limit it backs off by our Retry-After and then
 * succeeds; over the balance (`insufficient_quota`) it does not retry at all.
 */
import OpenAI from 'openai';
import { keyWithTokens } from '../helpers/stores';
import { proxyFixture } from '../helpers/fixture';
import { MODEL } from '../helpers/proxy';

/** A fetch that counts the SDK's attempts. */
function countingFetch(): { fetch: typeof fetch; attempts: () => number } {
  let n = 0;
  return {
    fetch: (input, init) => {
      n++;
      return fetch(input, init);
    },
    attempts: () => n,
  };
}

const ask = { model: MODEL, messages: [{ role: 'user' as const, content: 'Say hello.' }] };

describe('the openai SDK against limits', () => {
  // A one-second window keeps the SDK's back-off (which follows retry-after-ms) short.
  const t = proxyFixture('redis', { models: [{ limits: { rpm: 1 } }, { id: 'acme/free' }] }, { limitWindowMs: 1_000 });

  it.each([
    ['model', MODEL, null],
    ['key', 'acme/free', { rpm: 1 }],
  ] as const)(
    'retries a request over the %s rpm on its own, after the wait we told it, and gets the completion',
    async (_level, model, limits) => {
      const key = await keyWithTokens(t.s.store, 10_000, { limits });
      const counted = countingFetch();
      const client = new OpenAI({ apiKey: key.secret, baseURL: t.proxy.baseURL, fetch: counted.fetch });
      await client.chat.completions.create({ ...ask, model });
      const completion = await client.chat.completions.create({ ...ask, model });
      expect(completion.choices[0].message.content).toBeTruthy();
      // The second call was refused at least once (the window holds one request) and then passed.
      expect(counted.attempts()).toBeGreaterThanOrEqual(3);
      expect(t.upstream.calls).toHaveLength(2);
    },
  );

  it('does not retry insufficient_quota', async () => {
    const poor = await keyWithTokens(t.s.store, 3);
    const counted = countingFetch();
    const client = new OpenAI({ apiKey: poor.secret, baseURL: t.proxy.baseURL, fetch: counted.fetch });
    const err = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect(counted.attempts()).toBe(1);
    expect(t.upstream.calls).toHaveLength(0);
  });
});
