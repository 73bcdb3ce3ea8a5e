/**
 * A RESERVE whose reply was lost (the connection died after Redis ran it; the client got a 503) is released by its
 * request id as soon as the store answers again, not held until its lease lapses (60 s here). A real redis-server
 * behind a TCP proxy that loses that one reply.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { chatBody, MODEL, startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { startReplyDropper, type ReplyDropper } from '../helpers/reply-dropper';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

describe('a RESERVE whose reply was lost', () => {
  let dropper: ReplyDropper;
  let upstream: TestUpstream;
  let proxied: RedisStore;
  let direct: RedisStore;
  let proxy: ProxyUnderTest;
  const prefix = `lr${randomBytes(4).toString('hex')}:`;
  beforeAll(async () => {
    dropper = await startReplyDropper(testRedisUrl());
    upstream = await startUpstream();
    const client = new Redis(dropper.url, redisClientOptions(1_000));
    client.on('error', () => {}); // the dropped connection, expected (the server logs its client's errors)
    proxied = new RedisStore(client, { prefix });
    direct = new RedisStore(new Redis(testRedisUrl()), { prefix });
    proxy = await startProxy({ store: proxied, upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
    await proxied.close();
    await direct.close();
    await dropper.close();
  });

  it('is released by request id once the store answers again, not left to its lease', async () => {
    const k = await keyWithTokens(direct, 10_000);
    // The model id is in RESERVE's arguments alone (not in the key's lookup): its reply is the one lost.
    dropper.arm(MODEL, 1_500);
    const res = await request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${k.secret}`).send(chatBody());
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('store_unavailable');
    await dropper.dropped();
    // Redis ran it: without a release it would hold its tokens for the 60 s lease.
    await eventually(async () => expect(await direct.getKey(k.id)).toMatchObject({ reserved: 0, balance: 10_000 }), 10_000);
    expect(upstream.calls).toHaveLength(0);
    // The release's own reply comes back through the dropper after Redis ran it: its log line may follow our read.
    await eventually(async () => expect(proxy.logs.join('')).toMatch(/released a reservation whose reply was lost/), 10_000);
    // The store answers again: requests are served and charged as usual.
    const next = await request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${k.secret}`).send(chatBody());
    expect(next.status).toBe(200);
  }, 30_000);
});
