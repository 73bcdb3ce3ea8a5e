/**
 * A generated corpus of bad requests against the built proxy process on Redis: every one is a 4xx in the exact OpenAI
 * error shape without a stack trace, reaches no upstream, costs nothing and leaves no reservation, and the process
 * stays up and keeps serving.
 */
import fc from 'fast-check';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { chatBody, MODEL } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import { writeModelsFile } from '../helpers/models-file';
import { eventually } from '../helpers/eventually';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { send, sendBytes, expectOpenAIErrorShape, type RawResponse } from '../helpers/raw-http';
import type { OutgoingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';

const BODY_LIMIT = 1024 * 1024;
const MAX_OUTPUT_TOKENS = 1024;
const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const inRange = (min: number, max: number) => (v: unknown) => typeof v === 'number' && v >= min && v <= max;
const intIn = (min: number, max: number) => (v: unknown) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;

/** Numbers just outside [min, max], and numeric strings. */
function outside(min: number, max: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.double({ min: max, max: max + 1, minExcluded: true, noNaN: true }),
    fc.double({ min: min - 1, max: min, maxExcluded: true, noNaN: true }),
    fc.constantFrom(String(min), String(max), `${max}e0`),
  );
}

/** Integers just outside [min, max], fractions inside it, and numeric strings. */
function notIntIn(min: number, max: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.integer({ min: max + 1, max: max + 1000 }),
    fc.integer({ min: min - 1000, max: min - 1 }),
    fc.double({ min, max, noNaN: true }).filter((v) => !Number.isInteger(v)),
    fc.constantFrom(String(min), String(max)),
  );
}

/**
 * For each field of the request schema: where it goes in a chat body, and which values the proxy would accept (and
 * forward). The corpus sends everything else; `null` is left out where the field is optional (null means absent).
 */
const FIELDS: Record<
  string,
  { place: (v: unknown) => Record<string, unknown>; param: RegExp; accepted: (v: unknown) => boolean; near?: fc.Arbitrary<unknown> }
> = {
  model: {
    place: (v) => ({ model: v }),
    param: /^model$/,
    accepted: (v) => typeof v === 'string' && v.length > 0,
    near: fc.constantFrom('', [MODEL], { id: MODEL }),
  },
  messages: { place: (v) => ({ messages: v }), param: /^messages/, accepted: (v) => Array.isArray(v) && v.length > 0 },
  role: {
    place: (v) => ({ messages: [{ role: v, content: 'hi' }] }),
    param: /^messages\[0\]\.role$/,
    accepted: (v) => ROLES.includes(v as string),
    near: fc.constantFrom(...ROLES).chain((r) => fc.constantFrom(r.toUpperCase(), ` ${r}`, `${r}s`, r.slice(1), [r])),
  },
  content: {
    place: (v) => ({ messages: [{ role: 'user', content: v }] }),
    param: /^messages\[0\]\.content/,
    accepted: (v) => typeof v === 'string' || (Array.isArray(v) && v.every((p) => isObject(p) && typeof p.type === 'string')),
  },
  temperature: { place: (v) => ({ temperature: v }), param: /^temperature$/, accepted: inRange(0, 2), near: outside(0, 2) },
  top_p: { place: (v) => ({ top_p: v }), param: /^top_p$/, accepted: inRange(0, 1), near: outside(0, 1) },
  frequency_penalty: {
    place: (v) => ({ frequency_penalty: v }),
    param: /^frequency_penalty$/,
    accepted: inRange(-2, 2),
    near: outside(-2, 2),
  },
  presence_penalty: {
    place: (v) => ({ presence_penalty: v }),
    param: /^presence_penalty$/,
    accepted: inRange(-2, 2),
    near: outside(-2, 2),
  },
  // Above the model's max_output_tokens is refused too (400, param max_tokens).
  max_tokens: {
    place: (v) => ({ max_tokens: v }),
    param: /^max_tokens$/,
    accepted: intIn(1, MAX_OUTPUT_TOKENS),
    near: notIntIn(1, MAX_OUTPUT_TOKENS),
  },
  max_completion_tokens: {
    place: (v) => ({ max_completion_tokens: v }),
    param: /^max_completion_tokens$/,
    accepted: intIn(1, MAX_OUTPUT_TOKENS),
    near: notIntIn(1, MAX_OUTPUT_TOKENS),
  },
  n: { place: (v) => ({ n: v }), param: /^n$/, accepted: intIn(1, 128), near: notIntIn(1, 128) },
  stream: { place: (v) => ({ stream: v }), param: /^stream$/, accepted: (v) => typeof v === 'boolean' },
  stream_options: {
    place: (v) => ({ stream: true, stream_options: v }),
    param: /^stream_options/,
    accepted: (v) => isObject(v) && (v.include_usage === undefined || v.include_usage === null || typeof v.include_usage === 'boolean'),
  },
  response_format: {
    place: (v) => ({ response_format: v }),
    param: /^response_format/,
    accepted: (v) => isObject(v) && typeof v.type === 'string',
  },
  tools: { place: (v) => ({ tools: v }), param: /^tools/, accepted: (v) => Array.isArray(v) && v.every(isObject) },
  tool_choice: { place: (v) => ({ tool_choice: v }), param: /^tool_choice$/, accepted: (v) => typeof v === 'string' || isObject(v) },
};
const REQUIRED = new Set(['model', 'messages', 'role', 'content']);

/** Any JSON value, biased towards the near misses: numbers at and beyond the ranges, numeric strings, empty things. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -300, max: 300 }),
  fc.constantFrom(0, -1, 1.5, 2.0000001, -2.0000001, 1.0000001, 129, 1025, 1e21, Number.MAX_SAFE_INTEGER + 2, -0.5),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', '1', '0.5', 'true', 'user', 'none', '[]', '{}'),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  fc.constantFrom<unknown>([], {}, [{}], [1], [{ type: 5 }], [[]], { include_usage: 'yes' }, { type: null }, [null]),
);

/** Any value, or (as often) a near miss for the field. */
const valueFor = (field: string): fc.Arbitrary<unknown> => {
  const near = FIELDS[field].near;
  return near ? fc.oneof(anyValue, near) : anyValue;
};

const validBody = () => JSON.stringify(chatBody());

/** Bytes that are never valid UTF-8: invalid lead bytes, lone continuations, overlongs, truncations, surrogates, > U+10FFFF. */
const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe0, 0x80, 0xaf],
];

const CONTENT_TYPES = [
  undefined,
  '',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset="',
  'application/json;;;=;',
  '*/*',
  'application/octet-stream',
];

/** A nested JSON value `depth` levels deep, as arrays or objects. */
const nested = (shape: 'array' | 'object', depth: number) =>
  shape === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** A chat body with `deep` spliced in where `where` says (as text: JSON.stringify could not make it). */
const DEEP_PLACES: Record<string, (deep: string) => string> = {
  'an unknown field': (d) => `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"metadata_x":${d}}`,
  tools: (d) =>
    `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${d}}}]}`,
  'a content part': (d) => `{"model":"${MODEL}","messages":[{"role":"user","content":[{"type":"text","text":"hi","x":${d}}]}]}`,
  'an unknown content part': (d) => `{"model":"${MODEL}","messages":[{"role":"user","content":[{"type":"custom","x":${d}}]}]}`,
  tool_calls: (d) =>
    `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"x":${d}}]}]}`,
  response_format: (d) =>
    `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":${d}}}`,
  tool_choice: (d) => `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function","x":${d}}}`,
  stream_options: (d) => `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"x":${d}}}`,
  'the model field': (d) => `{"model":${d},"messages":[{"role":"user","content":"hi"}]}`,
  'the messages field': (d) => `{"model":"${MODEL}","messages":${d}}`,
};

describe('bad input to the proxy process (redis store)', () => {
  let upstream: TestUpstream;
  let rp: RedisProxy;
  let key: { id: string; secret: string };
  let url: string;
  let callsBefore: number;
  const post = (body: Buffer | string, headers: OutgoingHttpHeaders = {}): Promise<RawResponse> =>
    send(url, { headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', ...headers }, body });

  /** A refusal of ours: 4xx, JSON, the exact OpenAI shape, no stack; returns the error object. */
  const expectRefusal = (res: RawResponse, status?: number) => {
    if (status !== undefined) expect(res.status).toBe(status);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return expectOpenAIErrorShape(res.text);
  };

  /** Nothing reached the upstream, the key was not charged, no reservation is left, the process lives. */
  const expectNoHarm = async (k = key, balance = 10_000) => {
    expect(upstream.calls.length).toBe(callsBefore);
    // A reservation released after a late refusal is returned asynchronously.
    await eventually(async () => expect(await rp.store.getKey(k.id)).toMatchObject({ balance, reserved: 0, debt: 0 }));
    expect(await rp.store.usage({ keyId: k.id, limit: 10 })).toEqual([]);
    expect(rp.proxy.child.exitCode).toBeNull();
    expect(rp.proxy.child.signalCode).toBeNull();
  };

  /**
   * Sends a request whose only fault is in its request line or one extra header: a real key, a valid body, so if
   * the fault were ignored the request would be served (and reach the upstream).
   */
  const sendRaw = (requestLine: string, extraHeader = '') => {
    const body = validBody();
    return sendBytes(
      rp.proxy.port,
      `${requestLine}\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\n` +
        `${extraHeader}Content-Length: ${body.length}\r\n\r\n${body}`,
    );
  };

  /**
   * A 4xx in the OpenAI shape without a stack, whether Express refused it or Node's parser did (answered by
   * src/http/client-error.ts, which closes the connection); returns the status and the error.
   */
  const expectMalformedRefused = (raw: string) => {
    const { status, headers, body: text } = parseRaw(raw);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(raw).not.toMatch(/\n\s+at /);
    expect(headers).toMatch(/^content-type: application\/json/im);
    const error = expectOpenAIErrorShape(text);
    if (error.code === 'malformed_http' || error.code === 'request_headers_too_large') {
      expect(headers).toMatch(/^connection: close\r?$/im);
    }
    return { status, error };
  };

  beforeAll(async () => {
    upstream = await startUpstream();
    rp = await startRedisProxyProcess({
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile([{ id: MODEL, context_length: 8192, max_output_tokens: MAX_OUTPUT_TOKENS }]),
      BODY_LIMIT: String(BODY_LIMIT),
    });
    url = `${rp.proxy.url}/v1/chat/completions`;
    key = await keyWithTokens(rp.store, 10_000);
  });
  beforeEach(() => {
    callsBefore = upstream.calls.length;
  });
  afterAll(async () => {
    await rp?.close();
    await upstream?.close();
  });

  it('malformed JSON: 400 invalid_json', async () => {
    const malformed = fc.oneof(
      // A proper prefix of a JSON object is never JSON.
      fc.integer({ min: 1, max: validBody().length - 1 }).map((i) => validBody().slice(0, i)),
      // Trailing garbage after a valid body.
      fc.constantFrom('x', '}', ',', '{', '"', 'null', '\\').map((tail) => validBody() + tail),
      fc.constantFrom(
        '{',
        '{"model": }',
        "{'model': 'acme/chat-small'}",
        '{"model":"a",}',
        '{"a": 01}',
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": "\\x41"}',
        '{"a": "\u0001"}',
        '{"a" "b"}',
        'nul',
        '\u0000',
        '{"a":1}{"b":2}',
      ),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => {
        try {
          JSON.parse(s);
          return false;
        } catch {
          return true;
        }
      }),
    );
    await fc.assert(
      fc.asyncProperty(malformed, async (body) => {
        // Strict JSON: a body starting with a non-{/[ character is refused before parsing, as invalid_json too.
        const err = expectRefusal(await post(body), 400);
        expect(err.code).toBe('invalid_json');
      }),
      { numRuns: 120 },
    );
    await expectNoHarm();
  });

  it('a wrong type or value at every field of the request schema: 400 naming the field', async () => {
    const wrong = fc.constantFrom(...Object.keys(FIELDS)).chain((field) =>
      valueFor(field)
        .map((raw) => (raw === undefined ? null : (JSON.parse(JSON.stringify(raw)) as unknown)))
        .filter((v) => !FIELDS[field].accepted(v) && (v !== null || REQUIRED.has(field)))
        .map((value) => ({ field, value })),
    );
    await fc.assert(
      fc.asyncProperty(wrong, async ({ field, value }) => {
        const err = expectRefusal(await post(JSON.stringify(chatBody(FIELDS[field].place(value)))), 400);
        expect(err.code).toBe('invalid_request_error');
        expect(err.param).toMatch(FIELDS[field].param);
      }),
      { numRuns: 400 },
    );
    await expectNoHarm();
  });

  it('several wrong fields at once: 400 naming one of them', async () => {
    const several = fc
      .uniqueArray(fc.constantFrom(...Object.keys(FIELDS).filter((f) => !['role', 'content', 'messages'].includes(f))), {
        minLength: 2,
        maxLength: 5,
      })
      .chain((fields) =>
        fc.tuple(
          ...fields.map((field) =>
            valueFor(field)
              .map((raw) => (raw === undefined ? null : (JSON.parse(JSON.stringify(raw)) as unknown)))
              .filter((v) => !FIELDS[field].accepted(v) && (v !== null || REQUIRED.has(field)))
              .map((value) => ({ field, value })),
          ),
        ),
      );
    await fc.assert(
      fc.asyncProperty(several, async (pairs) => {
        const over = Object.assign({}, ...pairs.map(({ field, value }) => FIELDS[field].place(value))) as Record<string, unknown>;
        const err = expectRefusal(await post(JSON.stringify(chatBody(over))), 400);
        expect(pairs.some(({ field }) => FIELDS[field].param.test(err.param ?? ''))).toBe(true);
      }),
      { numRuns: 60 },
    );
    await expectNoHarm();
  });

  it('bodies that are not an object: 400', async () => {
    const notObject = fc.oneof(
      fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
      fc.constant([chatBody()]),
      fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.string()),
    );
    await fc.assert(
      fc.asyncProperty(notObject, async (v) => {
        const err = expectRefusal(await post(JSON.stringify(v)), 400);
        expect(['invalid_json', 'invalid_request_error']).toContain(err.code);
      }),
      { numRuns: 60 },
    );
    await expectNoHarm();
  });

  it('bodies over BODY_LIMIT, with and without a Content-Length: 413', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: BODY_LIMIT + 1, max: 6 * BODY_LIMIT }), fc.boolean(), async (size, chunked) => {
        const head = `{"model":"${MODEL}","messages":[{"role":"user","content":"`;
        const tail = '"}]}';
        const body = Buffer.from(head + 'x'.repeat(size - head.length - tail.length) + tail);
        expect(body.length).toBe(size);
        const res = await send(url, {
          headers: {
            authorization: `Bearer ${key.secret}`,
            'content-type': 'application/json',
            ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': size }),
          },
          body,
        });
        const err = expectRefusal(res, 413);
        expect(err.code).toBe('request_too_large');
      }),
      { numRuns: 6 },
    );
    await expectNoHarm();
  });

  it('JSON nested 50k-150k levels deep anywhere in the body: 400, not a 500 or a crash', async () => {
    const deep = fc.record({
      where: fc.constantFrom(...Object.keys(DEEP_PLACES)),
      shape: fc.constantFrom<'array' | 'object'>('array', 'object'),
      depth: fc.integer({ min: 50_000, max: 150_000 }),
    });
    // Every place in both shapes 100k deep first, then random places, shapes and depths.
    await fc.assert(
      fc.asyncProperty(deep, async ({ where, shape, depth }) => {
        const body = DEEP_PLACES[where](nested(shape, depth));
        expect(body.length).toBeLessThan(BODY_LIMIT);
        expectRefusal(await post(body), 400);
      }),
      {
        numRuns: 30,
        examples: Object.keys(DEEP_PLACES).flatMap((where) =>
          (['array', 'object'] as const).map((shape): [{ where: string; shape: 'array' | 'object'; depth: number }] => [
            { where, shape, depth: 100_000 },
          ]),
        ),
      },
    );
    await expectNoHarm();
  });

  it('bodies that are not valid UTF-8: 400 invalid_json', async () => {
    const invalid = fc.record({
      bytes: fc.constantFrom(...INVALID_UTF8),
      at: fc.nat(),
      inString: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(invalid, async ({ bytes, at, inString }) => {
        // Inside a message's text (otherwise valid JSON), or anywhere in the body.
        const text = validBody();
        const i = inString ? text.indexOf('Say hello.') + (at % 10) : at % (text.length + 1);
        const body = Buffer.concat([Buffer.from(text.slice(0, i)), Buffer.from(bytes), Buffer.from(text.slice(i))]);
        const err = expectRefusal(await post(body), 400);
        expect(err.code).toBe('invalid_json');
      }),
      { numRuns: 80 },
    );
    await expectNoHarm();
  });

  it('odd or missing content types with a bad body: a 4xx in the OpenAI shape', async () => {
    const badBody = fc.oneof(
      fc.constant('{"model":'),
      fc.constant(JSON.stringify(chatBody({ temperature: 'hot' }))),
      fc.constant('[1,2]'),
      fc.constant('model=acme/chat-small&messages=hi'),
      fc.constant('--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\nacme/chat-small\r\n--xyz--'),
      fc.constant(''),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CONTENT_TYPES), badBody, async (type, body) => {
        const res = await send(url, {
          headers: { authorization: `Bearer ${key.secret}`, ...(type === undefined ? {} : { 'content-type': type }) },
          body,
        });
        expectRefusal(res);
      }),
      { numRuns: 60 },
    );
    await expectNoHarm();
  });

  it('a charset other than UTF-8 with a valid body: 415', async () => {
    for (const charset of ['latin1', 'iso-8859-1', 'windows-1252', 'koi8-r', 'nonsense']) {
      const err = expectRefusal(await post(validBody(), { 'content-type': `application/json; charset=${charset}` }), 415);
      expect(err.code).toBe('unsupported_media_type');
    }
    await expectNoHarm();
  });

  it('a very long bearer token (10 KB) and bytes outside ASCII in the key: 401', async () => {
    for (const token of [`sk-${'A'.repeat(10 * 1024)}`, `sk-${key.secret.slice(3)}${'x'.repeat(10 * 1024)}`, 'x'.repeat(10 * 1024)]) {
      const err = expectRefusal(await post(validBody(), { authorization: `Bearer ${token}` }), 401);
      expect(err.code).toBe('invalid_api_key');
    }
    // Node's parser passes bytes >= 0x80 in a header value through (as latin1): our check refuses them.
    const raw = await sendBytes(
      rp.proxy.port,
      Buffer.concat([
        Buffer.from('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer '),
        Buffer.from(key.secret.slice(0, 20)),
        Buffer.from([0xff, 0xfe, 0xc3, 0xa9]),
        Buffer.from(key.secret.slice(24)),
        Buffer.from(`\r\nContent-Length: ${validBody().length}\r\n\r\n${validBody()}`),
      ]),
    );
    const { status, body } = parseRaw(raw);
    expect(status).toBe(401);
    expect(expectOpenAIErrorShape(body).code).toBe('invalid_api_key');
    await expectNoHarm();
  });

  it.each([
    ['a bare CR in a header value', 'X-Note: a\rb\r\n'],
    ['a bare LF in a header value', 'X-Note: a\nb\r\n'],
    ['a CRLF splitting the Authorization value', 'Authorization: Bearer sk-\r\nAAAA\r\n'],
    ['an obsolete folded header line', 'X-Note: a\r\n b\r\n'],
    ['a NUL byte in a header value', 'X-Note: a\u0000b\r\n'],
    ['a space in a header name', 'X Note: a\r\n'],
    ['Content-Length and Transfer-Encoding together', 'Transfer-Encoding: chunked\r\n'],
    ['a second, different Content-Length', 'Content-Length: 3\r\n'],
  ])('%s: refused (by Node’s HTTP parser or by us) with a 4xx in the OpenAI shape', async (_what, header) => {
    expectMalformedRefused(await sendRaw('POST /v1/chat/completions HTTP/1.1', header));
    await expectNoHarm();
  });

  it('a header block over Node’s limit: 431 request_headers_too_large in the OpenAI shape, connection closed', async () => {
    const { status, error } = expectMalformedRefused(
      await sendRaw('POST /v1/chat/completions HTTP/1.1', `X-Big: ${'b'.repeat(20 * 1024)}\r\n`),
    );
    expect(status).toBe(431);
    expect(error.code).toBe('request_headers_too_large');
    await expectNoHarm();
  });

  it.each([
    ['an unknown HTTP version', 'POST /v1/chat/completions HTTP/9.9'],
    ['a request line that is not HTTP', 'GARBAGE'],
    ['an extra token in the request line', 'POST /v1/chat/completions HTTP/1.1 extra'],
    ['a method outside ASCII', 'PÖST /v1/chat/completions HTTP/1.1'],
    ['a NUL byte in the request target', 'POST /v1/chat/completions\u0000 HTTP/1.1'],
  ])('%s: 400 malformed_http in the OpenAI shape from Node’s HTTP parser, connection closed', async (_what, requestLine) => {
    const { status, error } = expectMalformedRefused(await sendRaw(requestLine));
    expect(status).toBe(400);
    expect(error.code).toBe('malformed_http');
    await expectNoHarm();
  });

  // FAILS (src bug): body-parser passes zlib's error on with status 400 but no `type`, and app.ts's errorHandler
  // turns every error without a known type into a 500 internal_error (logging its stack as 'unhandled error').
  it.each([
    ['gzip', Buffer.from('this is not gzip')],
    ['deflate', Buffer.from('this is not deflate')],
    ['br', Buffer.from('this is not brotli')],
    ['gzip', gzipSync(validBody()).subarray(0, 20)],
  ])('a body that does not decode as its Content-Encoding (%s): a 400 in the OpenAI shape, not a 500', async (encoding, body) => {
    const res = await post(body, { 'content-encoding': encoding });
    expectRefusal(res, 400);
    await expectNoHarm();
  });

  // FAILS (src bug): Node keeps the first of repeated Authorization headers and drops the rest (it joins only some
  // headers with ", "), so keys.ts's bearerToken never sees the duplicate it means to refuse: the first key is used.
  it.each([
    ['the same key twice', (a: string) => [a, a]],
    ['two different valid keys', (a: string, b: string) => [a, b]],
    ['a valid key, then a malformed one', (a: string) => [a, 'Bearer sk-nope']],
    ['a malformed key, then a valid one', (a: string) => ['Bearer sk-nope', a]],
  ])('two Authorization headers (%s): 401, nothing forwarded, neither key charged', async (_what, pick) => {
    const a = await keyWithTokens(rp.store, 1_000);
    const b = await keyWithTokens(rp.store, 1_000);
    const res = await send(url, {
      // Two header lines (an array), not one value with a comma.
      headers: { Authorization: pick(`Bearer ${a.secret}`, `Bearer ${b.secret}`), 'content-type': 'application/json' },
      body: validBody(),
    });
    const err = expectRefusal(res, 401);
    expect(err.code).toBe('invalid_api_key');
    await expectNoHarm(a, 1_000);
    await expectNoHarm(b, 1_000);
  });

  it('keeps serving a valid request afterwards: the process is alive and answers 200', async () => {
    const res = await post(validBody());
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).choices[0].message.content).toBeTruthy();
    expect(upstream.calls.length).toBe(callsBefore + 1);
    expect(rp.proxy.child.exitCode).toBeNull();
    expect(rp.proxy.child.signalCode).toBeNull();
  });
});

/** Status line, header block and body of a raw HTTP/1.1 answer (a Content-Length body; our errors always have one). */
function parseRaw(raw: string): { status: number; headers: string; body: string } {
  const m = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n/.exec(raw);
  if (!m) throw new Error(`not an HTTP response: ${JSON.stringify(raw.slice(0, 200))}`);
  const end = raw.indexOf('\r\n\r\n');
  return { status: Number(m[1]), headers: raw.slice(m[0].length, end), body: raw.slice(end + 4) };
}
