/**
 * Every request reserves the most the upstream can bill it: an item given by id (an `item_reference`, an item sent
 * back with its id) reserves the size recorded beside its owner when it was stored, one recorded without a size the
 * model's context length. So concurrent references cannot take a balance below the bound docs/guarantees.md gives:
 * only an honest count's shortfall is ever owed. The stand-in upstream bills a reference as OpenAI does: the tokens
 * of the item it names.
 */
import request from 'supertest';
import { storedResponseReply, responsesReply } from '../helpers/endpoint-replies';
import { proxyFixture } from '../helpers/fixture';
import { MODEL, settled } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import type { Behaviour } from '../helpers/upstream';
import { RedisResponseOwners } from '../../src/store/redis/redis-response-owners';

/** The stored input's tokens, as the upstream counts them. */
const STORED = 4_000;
const storedText = 'hello '.repeat(STORED - 10);

/** /v1/responses billing each reference the stored input it names; held 100 ms, so concurrent requests overlap. */
const expanding: Behaviour = (call, req, res) => {
  if (call.path.startsWith('/v1/responses/')) return storedResponseReply(call, req, res);
  const input = call.body.input as { type?: string }[];
  const refs = input.filter((item) => item.type === 'item_reference').length;
  setTimeout(() => responsesReply({ inputTokens: refs > 0 ? refs * STORED + 10 : STORED })(call, req, res), 100);
};

describe('items given by id', () => {
  const t = proxyFixture('redis');
  const post = (secret: string, body: object) =>
    request(t.proxy.url)
      .post('/v1/responses')
      .set('authorization', `Bearer ${secret}`)
      .send({ model: MODEL, max_output_tokens: 16, ...body });
  const reference = (id: string) => ({ input: [{ type: 'item_reference', id }] });

  /** Account A's key after it stored one answer to a 4,000-token input and listed its input item (now A's to name). */
  async function storedInput(tokens: number) {
    t.upstream.behave(expanding);
    const a = await keyWithTokens(t.s.store, tokens);
    const first = await post(a.secret, { input: [{ type: 'message', id: 'msg_input_1', role: 'user', content: storedText }] });
    expect(first.status).toBe(200);
    await settled(t.proxy);
    const listed = await request(t.proxy.url).get(`/v1/responses/${first.body.id}/input_items`).set('authorization', `Bearer ${a.secret}`);
    expect(listed.body.data[0].id).toBe('msg_input_1');
    return a;
  }

  it('20 concurrent item_references never take a balance below the bound: each reserves the item it names', async () => {
    const a = await storedInput(6_100);
    const balance = (await t.s.store.getKey(a.id))!.balance;
    expect(balance).toBeGreaterThan(1_900);
    expect(balance).toBeLessThan(2_200);
    const asks = t.upstream.calls.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(a.secret, reference('msg_input_1'))));
    // None fits ~2,000 tokens: all refused as the balance short, nothing forwarded.
    for (const res of answers) expect(res.body.error?.code).toBe('insufficient_quota');
    expect(t.upstream.calls.length).toBe(asks);
    // The item sent back whole with its id may be expanded as the reference is: it reserves the same.
    const resent = await post(a.secret, { input: [{ type: 'message', id: 'msg_input_1', role: 'user', content: 'Hi' }] });
    expect(resent.body.error?.code).toBe('insufficient_quota');

    // With room for two, at most two are admitted, and each is charged within what it reserved: no debt.
    await t.s.store.grantPackage(a.accountId, { tokens: 8_000, expiresAt: null });
    const more = await Promise.all(Array.from({ length: 20 }, () => post(a.secret, reference('msg_input_1'))));
    await settled(t.proxy);
    expect(more.filter((res) => res.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(more.filter((res) => res.status === 200).length).toBeLessThanOrEqual(2);
    expect(await t.s.store.getKey(a.id)).toMatchObject({ reserved: 0 });
    expect((await t.s.store.getKey(a.id))!.balance).toBeGreaterThanOrEqual(0);
  }, 30_000);

  it("reserves the model's context length for an item recorded without a size", async () => {
    t.upstream.behave(expanding);
    const low = await keyWithTokens(t.s.store, 8_000);
    const high = await keyWithTokens(t.s.store, 9_000);
    // Owners as a proxy recorded them before sizes were kept (or for an answer that reported no usage).
    const owners = new RedisResponseOwners(t.s.redis!, { prefix: t.s.prefix });
    for (const k of [low, high])
      await owners.record({
        accountId: k.accountId,
        model: MODEL,
        tokens: undefined,
        responseId: `resp_${k.id}`,
        itemIds: [`msg_${k.id}`],
      });
    const refused = await post(low.secret, reference(`msg_${low.id}`));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('insufficient_quota');
    // 8,192 (the context) and the request's own tokens and output fit in 9,000: served, charged what the upstream says.
    expect((await post(high.secret, reference(`msg_${high.id}`))).status).toBe(200);
    await settled(t.proxy);
    expect(await t.s.store.getKey(high.id)).toMatchObject({ reserved: 0, balance: 9_000 - (STORED + 10) - 5 });
  });
});
