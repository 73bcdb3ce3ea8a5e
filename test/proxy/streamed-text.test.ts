/** The raw keeper of a stream's text: bounded memory, yet every streamed piece of text counted when asked. */
import { countText } from '../../src/metering/estimate';
import { TokenCounter } from '../../src/metering/prompt-counter';
import { chatStream } from '../../src/proxy/endpoints/chat';
import { completionsEndpoint } from '../../src/proxy/endpoints/completions';
import { StreamedText } from '../../src/proxy/streamed-text';

const line = (content: string) => Buffer.from(`${JSON.stringify({ choices: [{ delta: { content } }] })}`);

describe('StreamedText', () => {
  it('counts the same text whether it stays raw or is boiled down past the raw limit', () => {
    const pieces = Array.from({ length: 3_000 }, (_, i) => `wörd${i} `);
    const text = new StreamedText(chatStream.textFields);
    for (const p of pieces) {
      const buf = line(p);
      text.add(buf, 0, buf.length);
    }
    expect(text.tokens()).toBe(countText(pieces.join('')));
  });

  it('counts one line larger than the raw limit, and keeps lines apart', () => {
    const big = 'x y '.repeat(70_000);
    const text = new StreamedText(chatStream.textFields);
    const a = line(big);
    const b = Buffer.from('"content":"z"');
    text.add(a, 0, a.length);
    text.add(b, 0, b.length);
    // Over the count batch, the big line's text is counted on its own.
    expect(text.tokens()).toBe(countText(big) + countText('z'));
  });

  it('counts vLLM’s reasoning once where it sends `reasoning` and its older copy `reasoning_content` together', () => {
    const text = new StreamedText(chatStream.textFields);
    const lines = [
      { reasoning: 'Thinking it over. ', reasoning_content: 'Thinking it over. ' },
      { reasoning_content: 'An older server. ' },
      { content: 'Hello.' },
    ].map((delta) => Buffer.from(JSON.stringify({ choices: [{ delta }] })));
    for (const buf of lines) text.add(buf, 0, buf.length);
    expect(text.tokens()).toBe(countText('Thinking it over. An older server. Hello.'));
  });

  it('skips the echoed prompt, escapes and all, and counts only what follows it', () => {
    const prompt = 'He said "stop"\nand left.\t' + 'x'.repeat(5_000);
    const text = new StreamedText(completionsEndpoint.answer.stream!.textFields, { skipChars: prompt.length });
    for (const piece of [prompt.slice(0, 10), prompt.slice(10) + ' Then', ' rain.']) {
      const buf = Buffer.from(JSON.stringify({ choices: [{ index: 0, text: piece }] }));
      text.add(buf, 0, buf.length);
    }
    expect(text.tokens()).toBe(countText(' Then rain.'));
  });

  it('hands text past the in-place limit to the count worker, and counts it the same', async () => {
    const counter = new TokenCounter();
    try {
      const text = new StreamedText(chatStream.textFields, { count: (texts) => counter.count(texts) });
      const long = 'The quick brown fox jumps over the lazy dog. '.repeat(100);
      const buf = line(long);
      text.add(buf, 0, buf.length);
      const tokens = text.tokens();
      expect(tokens).toBeInstanceOf(Promise);
      expect(await tokens).toBe(countText(long));
    } finally {
      await counter.close();
    }
  });
});
