/** The prompt estimate: the byte bound never undercounts the tokenizer, and PromptSize counts exactly only on demand. */
import fc from 'fast-check';
import type { ChatRequest } from '../../src/requests/chat-request';
import { countText, estimatePromptTokens, promptTokenBound, PromptSize } from '../../src/metering/estimate';

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.lorem({ maxCount: 40 }),
);
const message = fc.record({
  role: fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool'),
  content: fc.oneof(
    text,
    fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text'), text }),
        fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: fc.webUrl() }) }),
      ),
      { minLength: 1, maxLength: 4 },
    ),
  ),
  name: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
});

describe('prompt estimate', () => {
  it('bounds the tokenizer’s count from above, and its floor from below, for any text', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), (messages) => {
        const req = { model: 'a/b', messages } as ChatRequest;
        expect(promptTokenBound(req)).toBeGreaterThanOrEqual(estimatePromptTokens(req));
        expect(new PromptSize(req).floor(Infinity)).toBeLessThanOrEqual(estimatePromptTokens(req));
      }),
      { numRuns: 300 },
    );
  });

  it('counts with the tokenizer only when asked, once', () => {
    const req = { model: 'a/b', messages: [{ role: 'user', content: 'Hello there, how are you today?' }] } as ChatRequest;
    const size = new PromptSize(req);
    expect(size).toMatchObject({ exact: false, tokens: promptTokenBound(req) });
    size.counted(size.texts().map((text) => countText(text)));
    expect(size).toMatchObject({ exact: true, tokens: estimatePromptTokens(req) });
    expect(size.tokens).toBeLessThan(promptTokenBound(req));
  });
});
