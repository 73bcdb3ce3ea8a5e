/** The stream tap: whole lines out, usage found, usage-only chunk dropped on request, model rewritten. */
import { modelValue } from '../../src/catalog/models';
import { chatStream } from '../../src/proxy/endpoints/chat';
import { SseTap } from '../../src/proxy/sse-tap';

/** The client's id equals the upstream's name: nothing to rewrite. */
const SAME = modelValue('up/m');
const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const chunk = (content: string, model = 'up/m') => data({ model, choices: [{ index: 0, delta: { content } }], usage: null });
const usageChunk = (p: number, c: number, model = 'up/m') =>
  data({ model, choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });

function run(tap: SseTap, parts: (string | Buffer)[]): string {
  let out = '';
  for (const p of parts) out += tap.push(Buffer.isBuffer(p) ? p : Buffer.from(p)).toString();
  return out + tap.end().toString();
}

describe('SseTap', () => {
  it('passes bytes through unchanged when nothing needs rewriting, and reads the usage', () => {
    const stream = chunk('Hel') + chunk('lo') + usageChunk(7, 2) + 'data: [DONE]\n\n';
    const tap = new SseTap({ model: SAME, dropUsageChunk: false, dialect: chatStream });
    expect(run(tap, [stream])).toBe(stream);
    expect(tap.usage).toEqual({ promptTokens: 7, completionTokens: 2 });
    expect(tap.done).toBe(true);
  });

  it('emits only whole lines, however the upstream splits them (even inside a UTF-8 character)', () => {
    const stream = chunk('a') + chunk('héllo ✓') + usageChunk(3, 4) + 'data: [DONE]\n\n';
    const bytes = Buffer.from(stream);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1;
    const tap = new SseTap({ model: SAME, dropUsageChunk: false, dialect: chatStream });
    const first = tap.push(bytes.subarray(0, cut)).toString();
    expect(first).toBe(chunk('a'));
    const rest = tap.push(bytes.subarray(cut)).toString() + tap.end().toString();
    expect(first + rest).toBe(stream);
    expect(tap.usage).toEqual({ promptTokens: 3, completionTokens: 4 });
  });

  it('drops the usage-only chunk and its blank line when asked, leaving everything else', () => {
    const body = chunk('a') + chunk('b');
    const tap = new SseTap({ model: SAME, dropUsageChunk: true, dialect: chatStream });
    expect(run(tap, [body, usageChunk(1, 2), 'data: [DONE]\n\n'])).toBe(body + 'data: [DONE]\n\n');
    expect(tap.usage).toEqual({ promptTokens: 1, completionTokens: 2 });
  });

  it('rewrites the model in every chunk, whatever the upstream called it, keeping its spacing', () => {
    const tap = new SseTap({ model: modelValue('client/m'), dropUsageChunk: false, dialect: chatStream });
    const spaced = 'data: {"model": "up/m-2024-08-06", "choices": []}\r\n\r\n';
    const out = run(tap, [chunk('x', 'llama3:latest'), spaced, usageChunk(1, 1, 'other')]);
    expect(out).toBe(chunk('x', 'client/m') + 'data: {"model": "client/m", "choices": []}\r\n\r\n' + usageChunk(1, 1, 'client/m'));
  });

  it('leaves a "model" key inside a nested object alone', () => {
    const tap = new SseTap({ model: modelValue('client/m'), dropUsageChunk: false, dialect: chatStream });
    const line = 'data: {"choices":[{"delta":{"model":"inner"}}],"model":"up/m"}\n\n';
    expect(run(tap, [line])).toBe('data: {"choices":[{"delta":{"model":"inner"}}],"model":"client/m"}\n\n');
  });

  it('passes a chunk that needs no change as the same Buffer', () => {
    const bytes = Buffer.from(chunk('a') + chunk('b'));
    expect(new SseTap({ model: SAME, dropUsageChunk: true, dialect: chatStream }).push(bytes)).toBe(bytes);
  });

  it('counts streamed content and tool-call arguments when no usage comes', () => {
    const tap = new SseTap({ model: SAME, dropUsageChunk: false, dialect: chatStream });
    run(tap, [
      chunk('Hello'),
      chunk(' "world"'),
      data({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] } }] }),
    ]);
    expect(tap.usage).toBeUndefined();
    // Hello + ␠"world" + {"city":"Paris"} in o200k_base
    expect(tap.streamedCompletionTokens()).toBeGreaterThanOrEqual(6);
    expect(tap.streamedCompletionTokens()).toBeLessThanOrEqual(12);
  });

  it('ignores `"usage":null` and comment lines', () => {
    const tap = new SseTap({ model: SAME, dropUsageChunk: true, dialect: chatStream });
    const stream = ': keep-alive\n\n' + chunk('a');
    expect(run(tap, [stream])).toBe(stream);
    expect(tap.usage).toBeUndefined();
  });
});
