/**
 * Shutdown keeps the drain's promise: a stream whose client left is still being read for its usage when SIGTERM comes;
 * the built proxy reads on within the drain bound (capped by the shutdown grace), keeps its count worker until the
 * stream is settled, and charges exactly the usage the upstream reported, not a count of the text it saw.
 */
import http from 'node:http';
import Redis from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody, MODEL } from '../helpers/proxy';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

/** Longer than the 10 s a drain was given at shutdown before. */
const USAGE_AFTER_MS = 12_000;
const USAGE = { prompt_tokens: 10, completion_tokens: 5_000, total_tokens: 5_010 };

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

describe('SIGTERM during a drain', () => {
  let upstream: TestUpstream;
  let store: RedisStore;
  let prefix: string;
  let proxy: ProxyProcess;

  beforeEach(async () => {
    // vLLM's stream: 3,000 characters of text at once, then nothing for a while, then the usage chunk and [DONE].
    upstream = await startUpstream(async (_call, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: '' }));
      for (let i = 0; i < 30; i++) res.write(chunk({ content: 'All work and no play '.repeat(5) }));
      await new Promise((r) => setTimeout(r, USAGE_AFTER_MS));
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: USAGE })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
    prefix = `drain${Math.random().toString(36).slice(2, 8)}:`;
    store = new RedisStore(new Redis(testRedisUrl()), { prefix });
  });
  afterEach(async () => {
    await proxy?.stop('SIGKILL');
    await upstream.close();
    await store.close();
  });

  it('charges exactly the usage the upstream reports after the SIGTERM, within the drain bound and the grace', async () => {
    proxy = await startProxyProcess({
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      UPSTREAM_DRAIN_SECONDS: '60',
      SHUTDOWN_GRACE_SECONDS: '30',
      MODELS_FILE: writeModelsFile([{ id: MODEL, context_length: 16_384, max_output_tokens: 8_000 }]),
    });
    const key = await keyWithTokens(store, 100_000);
    // The client reads more than 2,048 characters of text (a count for the worker), then hangs up.
    await new Promise<void>((resolve) => {
      const req = http.request(
        `${proxy.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${key.secret}` } },
        (res) => {
          let seen = 0;
          res.on('data', (c: Buffer) => {
            seen += c.length;
            if (seen > 4_000) {
              req.destroy();
              resolve();
            }
          });
        },
      );
      req.on('error', () => {});
      req.on('close', () => resolve());
      req.end(JSON.stringify(chatBody({ stream: true })));
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(upstream.calls[0].aborted).toBe(false);
    proxy.child.kill('SIGTERM');
    expect(await proxy.exited()).toBe(0);
    const [record] = await store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({ promptTokens: 10, completionTokens: 5_000, chargedTokens: 5_010, estimated: false });
    expect(await store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 100_000 - 5_010 });
    expect(upstream.calls[0].aborted).toBe(false);
  });
});
