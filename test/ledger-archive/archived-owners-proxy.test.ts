/**
 * The proxy over the archive's owners (real PostgreSQL, the test redis-server): a stored response whose owner has
 * left Redis for PostgreSQL is still its account's (previous_response_id, item_reference, GET /v1/responses/{id}) and
 * never another's (404, nothing forwarded); while PostgreSQL is down a reference to it is refused to everyone (fail
 * closed) while a replayed conversation still passes, and it is served again when PostgreSQL is back.
 */
import request from 'supertest';
import { archivedOwners } from '../../src/ledger-archive/archived-owners';
import { PgLedgerArchive } from '../../src/ledger-archive/ledger-archive';
import { PgOwnersArchive } from '../../src/ledger-archive/owners-archive';
import { OwnersShipper } from '../../src/ledger-archive/owners-shipper';
import { createLogger } from '../../src/observability/logger';
import { RedisOwnerShipSource } from '../../src/store/redis/redis-owner-ship-source';
import { RedisResponseOwners } from '../../src/store/redis/redis-response-owners';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { MODEL, settled, startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

const DAY = 86_400_000;
const logger = createLogger('silent');

describe('stored responses whose owners are in PostgreSQL', () => {
  let pg: PostgresServer;
  let ledger: PgLedgerArchive;
  let archive: PgOwnersArchive;
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;
  let failures = 0;
  beforeAll(async () => {
    pg = await startPostgresServer();
    ledger = await PgLedgerArchive.open(pg.url);
    archive = new PgOwnersArchive(ledger);
  }, 30_000);
  afterAll(async () => {
    await ledger.close();
    await pg.destroy();
  });
  beforeEach(async () => {
    s = await makeStore('redis');
    upstream = await startUpstream();
    const live = new RedisResponseOwners(s.redis!, { prefix: s.prefix, archived: { hotMs: 48 * 3600_000 } });
    const responses = archivedOwners(live, archive, { logger, failed: () => failures++ });
    proxy = await startProxy({ store: s.store, upstreamUrl: upstream.url, responses });
  });
  afterEach(async () => {
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  const post = (secret: string, over: object) =>
    request(proxy.url)
      .post('/v1/responses')
      .set('authorization', `Bearer ${secret}`)
      .send({ model: MODEL, input: 'Hi', ...over });
  const get = (secret: string, id: string) => request(proxy.url).get(`/v1/responses/${id}`).set('authorization', `Bearer ${secret}`);

  /** An earlier answer's message, sent back whole with its id (as a client without `store` replays its conversation). */
  const replayed = (itemId: string) => ({
    type: 'message',
    id: itemId,
    role: 'assistant',
    content: [{ type: 'output_text', text: 'Earlier answer.' }],
  });

  it('is the account’s alone once only PostgreSQL knows it, and refused to everyone while PostgreSQL is down', async () => {
    const alice = await keyWithTokens(s.store, 100_000);
    const mallory = await keyWithTokens(s.store, 100_000);
    const first = await post(alice.secret, {});
    expect(first.status).toBe(200);
    const id = first.body.id as string;
    const item = first.body.output[0].id as string;
    await settled(proxy);
    // Days later: the day shipped, and its hashes gone from Redis.
    const source = new RedisOwnerShipSource(s.redis!, s.prefix);
    await new OwnersShipper({ source, archive, hotHours: 48, logger, now: () => Date.now() + 3 * DAY }).pass();
    const keys = await s.redis!.keys(`${s.prefix}own:*`);
    expect(keys.length).toBeGreaterThan(0);
    await s.redis!.del(...keys);

    const asks = upstream.calls.length;
    expect((await post(mallory.secret, { previous_response_id: id })).status).toBe(404);
    expect((await post(mallory.secret, { input: [{ type: 'item_reference', id: item }] })).status).toBe(404);
    expect((await get(mallory.secret, id)).status).toBe(404);
    // An item carried whole, with alice's id on it: PostgreSQL answers whose it is.
    expect((await post(mallory.secret, { input: [replayed(item)] })).status).toBe(404);
    expect(upstream.calls.length).toBe(asks);

    expect((await post(alice.secret, { previous_response_id: id })).status).toBe(200);
    expect((await post(alice.secret, { input: [{ type: 'item_reference', id: item }] })).status).toBe(200);
    expect((await get(alice.secret, id)).status).toBe(200);

    await pg.stop();
    try {
      const before = failures;
      expect((await post(alice.secret, { previous_response_id: id })).status).toBe(404);
      expect((await post(alice.secret, { input: [{ type: 'item_reference', id: item }] })).status).toBe(404);
      expect(failures).toBe(before + 2);
      // A stateless conversation replaying its own items (ids never recorded) is not refused for the outage.
      expect((await post(alice.secret, { input: [replayed('msg_never_stored'), { role: 'user', content: 'And?' }] })).status).toBe(200);
    } finally {
      await pg.start();
    }
    expect((await post(alice.secret, { previous_response_id: id })).status).toBe(200);
    await settled(proxy);
  }, 30_000);
});
