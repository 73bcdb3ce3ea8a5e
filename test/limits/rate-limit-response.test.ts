/** The client-facing form of limits: OpenAI's duration format, the tightest level's headers, the 429's parts. */
import { formatReset, rateLimitHeaders, rateLimitRefusal } from '../../src/limits/rate-limit-response';
import type { LimitRefusal } from '../../src/limits/limits';

describe('formatReset', () => {
  it.each([
    [0, '0s'],
    [120, '120ms'],
    [999.2, '1s'],
    [17.5, '18ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [8_640, '8.64s'],
    [59_988, '59.988s'],
    [60_000, '1m0s'],
    [86_400, '1m26.4s'],
    [360_000, '6m0s'],
    [3_600_000, '1h0m0s'],
    [3_725_500, '1h2m5.5s'],
  ])('writes %p ms as %p, as OpenAI (Go) does', (ms, text) => {
    expect(formatReset(ms)).toBe(text);
  });
});

describe('rateLimitHeaders', () => {
  it('reports requests and tokens each from the level with the least left', () => {
    const headers = rateLimitHeaders([
      { requests: { limit: 60, remaining: 10, resetMs: 60_000 }, tokens: { limit: 10_000, remaining: 9_000, resetMs: 60_000 } },
      { requests: { limit: 1_000, remaining: 5, resetMs: 30_000 }, tokens: { limit: 100_000, remaining: 99_000, resetMs: 1_200 } },
      { concurrent: { limit: 4, inFlight: 1 } },
    ]);
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '1000',
      'x-ratelimit-remaining-requests': '5',
      'x-ratelimit-reset-requests': '30s',
      'x-ratelimit-limit-tokens': '10000',
      'x-ratelimit-remaining-tokens': '9000',
      'x-ratelimit-reset-tokens': '1m0s',
    });
  });

  it('sends nothing for levels without rate limits', () => {
    expect(rateLimitHeaders([{}, { concurrent: { limit: 2, inFlight: 0 } }])).toEqual({});
  });
});

describe('rateLimitRefusal', () => {
  const base: LimitRefusal = {
    level: 'key',
    kind: 'requests',
    limit: 60,
    used: 60,
    requested: 120,
    retryAfterMs: 1_250,
    tooLarge: false,
    use: { requests: { limit: 60, remaining: 0, resetMs: 59_000 } },
  };

  it('names limit and level, and says when to retry in both headers', () => {
    const { error, headers } = rateLimitRefusal(base);
    expect(error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    expect(error.message).toBe('Rate limit reached for requests per minute on this key: limit 60, used 60. Please try again in 1.25s.');
    expect(headers).toMatchObject({ 'retry-after': '2', 'retry-after-ms': '1250', 'x-ratelimit-remaining-requests': '0' });
    expect(headers['x-should-retry']).toBeUndefined();
  });

  it('gives tpm refusals the tokens type and the requested amount', () => {
    const { error } = rateLimitRefusal({ ...base, level: 'account', kind: 'tokens', limit: 1_000, used: 900 });
    expect(error.type).toBe('tokens');
    expect(error.message).toMatch(/^Rate limit reached for tokens per minute on this account: limit 1000, used 900, requested 120\./);
  });

  it('tells the SDKs not to retry a request larger than the limit itself', () => {
    const { error, headers } = rateLimitRefusal({ ...base, kind: 'tokens', limit: 100, tooLarge: true });
    expect(error.message).toMatch(/^Request too large for tokens per minute on this key: limit 100, requested 120\./);
    expect(headers['x-should-retry']).toBe('false');
  });
});
