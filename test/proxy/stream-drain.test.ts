/**
 * The attack: a client hangs up just before the usage line (at `finish_reason`, at `response.output_text.done`) of a
 * reasoning model's stream, whose usage reports 5,050 completion tokens (5,000 of them hidden reasoning), hoping to be
 * charged for the text it saw. The proxy reads the stream on after the client left and charges the upstream's usage,
 * wherever the client cut; without usage, the larger of what streamed and what was reserved for output.
 */
import http from 'node:http';
import { countText } from '../../src/metering/estimate';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { settled, MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';
import {
  COMPLETION_TOKENS,
  CONTENT_PIECES,
  PROMPT_TOKENS,
  REASONING_PIECES,
  REASONING_TOKENS,
  reasoningReply,
} from '../helpers/reasoning-upstream';

const BALANCE = 100_000;
/** Models: the default (drain 30 s), one that reads nothing on after its client leaves (0), one bound at 1 s. */
const NO_DRAIN = 'acme/model-1';
const SHORT_DRAIN = 'acme/model-2';
/** The output cap each request names: what its reservation holds for output. */
const CAP = 700;
/** All the text the streams carry, reasoning first, as our tokenizer counts it. */
const STREAMED = countText(REASONING_PIECES.join('') + CONTENT_PIECES.join(''));

const endpoints = [
  {
    path: '/v1/chat/completions',
    body: (model: string, usage = false) => ({
      model,
      stream: true,
      ...(usage && { stream_options: { include_usage: true } }),
      max_tokens: CAP,
      messages: [{ role: 'user', content: 'Hi' }],
    }),
    usageLine: '"choices":[]',
    lastContent: '"finish_reason":"stop"',
  },
  {
    path: '/v1/completions',
    body: (model: string, usage = false) => ({
      model,
      stream: true,
      ...(usage && { stream_options: { include_usage: true } }),
      max_tokens: CAP,
      prompt: 'Hi',
    }),
    usageLine: '"choices":[]',
    lastContent: '"finish_reason":"stop"',
  },
  {
    path: '/v1/responses',
    body: (model: string, _usage = false) => ({ model, stream: true, max_output_tokens: CAP, input: 'Hi' }),
    usageLine: 'event: response.content_part.done',
    lastContent: 'event: response.output_text.done',
  },
];

/**
 * Streams `body` and leaves once `cut` bytes have arrived, or once what arrived contains `cut` and its event's end
 * (never, when undefined); resolves with what it got.
 */
function streamAndLeave(url: string, secret: string, body: object, cut?: number | string): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.on('response', (res) => {
      let received = '';
      res.on('data', (c: Buffer) => {
        received += c.toString('latin1');
        if (leaves(received, cut)) {
          req.destroy();
          resolve(received);
        }
      });
      res.on('end', () => resolve(received));
      res.on('error', () => resolve(received));
    });
    req.end(JSON.stringify(body));
  });
}

/** Whether the client leaves, having received `received`: past `cut` bytes, or past the end of the event with `cut`. */
function leaves(received: string, cut: number | string | undefined): boolean {
  if (typeof cut === 'number') return received.length >= cut;
  if (cut === undefined) return false;
  const at = received.indexOf(cut);
  return at !== -1 && received.indexOf('\n\n', at) !== -1;
}

/** Byte offsets to cut at: byte 1, each event's middle and end, up to the usage line (never into it). */
function cutPoints(stream: string, usageLine: string): number[] {
  const end = stream.indexOf(usageLine);
  const cuts = new Set<number>([1]);
  let start = 0;
  for (let at = stream.indexOf('\n\n'); at !== -1 && at < end; at = stream.indexOf('\n\n', at + 2)) {
    cuts.add(Math.floor((start + at) / 2));
    cuts.add(at + 2);
    start = at + 2;
  }
  return [...cuts].filter((c) => c <= end);
}

describe.each(storeKinds)('a client that leaves a stream early (%s store)', (kind) => {
  const t = proxyFixture(kind, { models: [{}, { drain_seconds: 0 }, { drain_seconds: 1 }] });
  const url = (path: string) => `${t.proxy.url}${path}`;
  const drains = async (outcome: string) =>
    (await t.proxy.metrics.streamDrains.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  const recordOf = async (keyId: string) => {
    const records = await t.s.store.usage({ keyId, limit: 10 });
    expect(records).toHaveLength(1);
    return records[0];
  };

  it.each(endpoints)('is charged the upstream’s usage wherever it cuts $path, never the text it saw', async ({ path, body, usageLine }) => {
    t.upstream.behave(reasoningReply());
    const whole = await keyWithTokens(t.s.store, BALANCE);
    // The bytes before the usage line are the same whether the client asked for usage or not (then it gets none).
    const reference = await streamAndLeave(url(path), whole.secret, body(MODEL, true));
    expect(reference).toContain(usageLine);
    const cuts = cutPoints(reference, usageLine);
    expect(cuts.length).toBeGreaterThan(12);

    const cases = cuts.flatMap((cut) => [true, false].map((askUsage) => ({ cut, askUsage })));
    const keys = await Promise.all(cases.map(() => keyWithTokens(t.s.store, BALANCE)));
    const results = await Promise.all(
      cases.map(({ cut, askUsage }, i) => streamAndLeave(url(path), keys[i].secret, body(MODEL, askUsage), cut)),
    );
    for (const received of results) expect(received).not.toContain(usageLine);
    await settled(t.proxy);

    const charged = [];
    for (const key of [whole, ...keys]) {
      const record = await recordOf(key.id);
      charged.push(record.completionTokens);
      expect(record).toMatchObject({ promptTokens: PROMPT_TOKENS, estimated: false });
      if (!path.endsWith('/v1/completions')) expect(record.reasoningTokens).toBe(REASONING_TOKENS);
      expect([200, 499]).toContain(record.status);
      expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: BALANCE - record.chargedTokens });
    }
    // Every cut point, the whole stream first: the upstream's usage, never the text seen (a few dozen tokens).
    expect(charged).toEqual([COMPLETION_TOKENS, ...cases.map(() => COMPLETION_TOKENS)]);
    expect(await drains('usage')).toBeGreaterThan(0);
  });

  it.each(endpoints)(
    'with drain_seconds 0, aborts $path at once and charges the streamed text, reasoning included',
    async ({ path, body, lastContent }) => {
      t.upstream.behave(reasoningReply({ usageDelayMs: 2_000 }));
      const key = await keyWithTokens(t.s.store, BALANCE);
      await streamAndLeave(url(path), key.secret, body(NO_DRAIN), lastContent);
      expect((await t.upstream.aborted()).aborted).toBe(true);
      await settled(t.proxy);
      const record = await recordOf(key.id);
      expect(record).toMatchObject({ status: 499, estimated: true, completionTokens: STREAMED });
      expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: BALANCE - record.chargedTokens });
    },
  );

  it.each(endpoints)(
    'aborts $path once the bound passes without usage, and charges what was reserved for output',
    async ({ path, body, lastContent }) => {
      t.upstream.behave(reasoningReply({ usage: 'stall' }));
      const key = await keyWithTokens(t.s.store, BALANCE);
      const left = Date.now();
      await streamAndLeave(url(path), key.secret, body(SHORT_DRAIN), lastContent);
      // Read on (the upstream is not aborted at once), then let go at the bound.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(t.upstream.calls[0].aborted).toBe(false);
      expect((await t.upstream.aborted()).aborted).toBe(true);
      expect(Date.now() - left).toBeGreaterThanOrEqual(900);
      await settled(t.proxy);
      const record = await recordOf(key.id);
      expect(record).toMatchObject({ status: 499, estimated: true, completionTokens: Math.max(CAP, STREAMED) });
      expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: BALANCE - record.chargedTokens });
      expect(await drains('bound')).toBe(1);
    },
  );

  it.each(endpoints)(
    'charges what was reserved for output when $path ends without usage after its client left',
    async ({ path, body, lastContent }) => {
      t.upstream.behave(reasoningReply({ usage: 'never', usageDelayMs: 200 }));
      const key = await keyWithTokens(t.s.store, BALANCE);
      await streamAndLeave(url(path), key.secret, body(MODEL), lastContent);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await settled(t.proxy);
      const record = await recordOf(key.id);
      expect(record).toMatchObject({ status: 499, estimated: true, completionTokens: Math.max(CAP, STREAMED) });
      expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: BALANCE - record.chargedTokens });
      expect(await drains('ended')).toBe(1);
    },
  );

  it.each(endpoints)(
    'counts the reasoning in $path’s streamed text when the upstream sends no usage to a client that stays',
    async ({ path, body }) => {
      t.upstream.behave(reasoningReply({ usage: 'never' }));
      const key = await keyWithTokens(t.s.store, BALANCE);
      await streamAndLeave(url(path), key.secret, body(MODEL));
      await settled(t.proxy);
      expect(await recordOf(key.id)).toMatchObject({ status: 200, estimated: true, completionTokens: STREAMED });
    },
  );
});

describe.each(storeKinds)('a stream read on after its client left (%s store, 1 s leases)', (kind) => {
  const t = proxyFixture(kind, { env: { RESERVATION_LEASE_SECONDS: '1' } });

  it('keeps its reservation’s lease renewed until its usage comes', async () => {
    t.upstream.behave(reasoningReply({ usageDelayMs: 2_500 }));
    const key = await keyWithTokens(t.s.store, BALANCE);
    const { path, body, lastContent } = endpoints[0];
    await streamAndLeave(`${t.proxy.url}${path}`, key.secret, body(MODEL), lastContent);
    // Two leases' time later, the reservation is still held (a lapsed one is given back when next read).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await t.s.store.getKey(key.id))!.reserved).toBeGreaterThan(CAP);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({ completionTokens: COMPLETION_TOKENS, estimated: false });
    expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: BALANCE - record.chargedTokens });
  });
});
