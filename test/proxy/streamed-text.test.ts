/** The raw keeper of a stream's text: bounded memory, yet every streamed piece of text counted when asked. */
import { countText } from '../../src/metering/estimate';
import { chatStream } from '../../src/proxy/endpoints/chat';
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
});
