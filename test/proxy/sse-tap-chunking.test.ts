/**
 * The tap's property: however the network cuts an upstream stream into reads (inside a UTF-8 character, between CR
 * and LF, inside `data:` or `[DONE]`), the client gets the same bytes and the meter the same usage and counts.
 */
import fc from 'fast-check';
import { modelValue } from '../../src/catalog/models';
import { chatStream } from '../../src/proxy/endpoints/chat';
import { responsesStream } from '../../src/proxy/endpoints/responses';
import type { StreamDialect } from '../../src/proxy/pipeline/endpoint';
import { SseTap } from '../../src/proxy/sse-tap';

interface Stream {
  events: ({ kind: 'content' | 'args'; text: string } | { kind: 'comment' })[];
  upstreamModel: string;
  usage: { p: number; c: number } | null;
  eol: string;
  done: boolean;
  finalNewline: boolean;
  dropUsage: boolean;
}

const CLIENT_ID = 'client/m';

/**
 * The stream as an upstream writes it, naming the model `model`; `withUsage` off leaves out the usage chunk, as the
 * tap does when it drops it (with its blank line, or unterminated when it was the stream's unterminated last event).
 */
function render(s: Stream, model: string, withUsage: boolean): string {
  const events: { line: string; usage?: true }[] = [];
  for (const e of s.events) {
    if (e.kind === 'comment') events.push({ line: ': keep-alive' });
    else {
      const delta = e.kind === 'content' ? { content: e.text } : { tool_calls: [{ index: 0, function: { arguments: e.text } }] };
      events.push({ line: `data: ${JSON.stringify({ id: 'c1', model, choices: [{ index: 0, delta }], usage: null })}` });
    }
  }
  if (s.usage) {
    const usage = { prompt_tokens: s.usage.p, completion_tokens: s.usage.c, total_tokens: s.usage.p + s.usage.c };
    events.push({ line: `data: ${JSON.stringify({ id: 'c1', model, choices: [], usage })}`, usage: true });
  }
  if (s.done) events.push({ line: 'data: [DONE]' });
  const last = events.length - 1;
  return events.map((e, i) => (withUsage || !e.usage ? e.line + (i === last && !s.finalNewline ? '' : s.eol + s.eol) : '')).join('');
}

/** Feeds the stream cut at `cuts` (byte offsets); returns what the client got and what the meter learnt. */
function feed(bytes: Buffer, cuts: number[], dropUsage: boolean, dialect: StreamDialect = chatStream) {
  const tap = new SseTap({ model: modelValue(CLIENT_ID), dropUsageChunk: dropUsage, dialect });
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    out.push(tap.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(tap.push(bytes.subarray(from)), tap.end());
  return { client: Buffer.concat(out).toString('utf8'), usage: tap.usage, done: tap.done, tokens: tap.streamedCompletionTokens() };
}

const text = fc.string({ unit: fc.constantFrom('a', 'é', '✓', '😀', '"', '\\', '\n', ' ', 'model', '"model":"x"'), maxLength: 12 });
const stream: fc.Arbitrary<Stream> = fc.record({
  events: fc.array(
    fc.oneof(fc.record({ kind: fc.constantFrom('content' as const, 'args' as const), text }), fc.constant({ kind: 'comment' as const })),
    { maxLength: 8 },
  ),
  upstreamModel: fc.constantFrom(CLIENT_ID, 'gpt-4o-2024-08-06', 'llama3:latest', 'ünï"code'),
  usage: fc.option(fc.record({ p: fc.nat(1000), c: fc.nat(1000) })),
  eol: fc.constantFrom('\n', '\r\n'),
  done: fc.boolean(),
  finalNewline: fc.boolean(),
  dropUsage: fc.boolean(),
});

describe('SseTap under any chunking', () => {
  it('gives the client the upstream bytes with only the model changed, and the same usage and counts', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 12 }), (s, cuts) => {
        const bytes = Buffer.from(render(s, s.upstreamModel, true));
        const whole = feed(bytes, [], s.dropUsage);
        const cut = feed(bytes, cuts, s.dropUsage);
        expect(cut).toEqual(whole);
        expect(cut.client).toBe(render(s, CLIENT_ID, !s.dropUsage));
        expect(cut.usage).toEqual(s.usage ? { promptTokens: s.usage.p, completionTokens: s.usage.c } : undefined);
        expect(cut.done).toBe(s.done);
      }),
      { numRuns: 300 },
    );
  });
});

interface ResponsesStream {
  deltas: string[];
  upstreamModel: string;
  usage: { p: number; c: number } | null;
  last: 'completed' | 'incomplete' | 'failed';
  eol: string;
  finalNewline: boolean;
}

/** A Responses stream as vLLM writes it: typed `event:` lines, the model inside each lifecycle event's `response`. */
function renderResponses(s: ResponsesStream, model: string): string {
  const blocks: string[] = [];
  let seq = 0;
  const event = (type: string, fields: object) =>
    blocks.push(`event: ${type}${s.eol}data: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}`);
  const response = (status: string, usage: object | null) => ({
    id: 'resp_1',
    object: 'response',
    model,
    status,
    tools: [{ type: 'function', name: 'f', parameters: { properties: { model: { type: 'string' } } } }],
    output: [],
    usage,
  });
  event('response.created', { response: response('in_progress', null) });
  for (const delta of s.deltas) event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta });
  const usage = s.usage ? { input_tokens: s.usage.p, output_tokens: s.usage.c, total_tokens: s.usage.p + s.usage.c } : null;
  event(`response.${s.last}`, { response: response(s.last, usage) });
  return blocks.map((b, i) => b + (i === blocks.length - 1 && !s.finalNewline ? '' : s.eol + s.eol)).join('');
}

const responsesStreams: fc.Arbitrary<ResponsesStream> = fc.record({
  deltas: fc.array(text, { maxLength: 8 }),
  upstreamModel: fc.constantFrom(CLIENT_ID, 'Qwen/Qwen3-8B', 'ünï"code'),
  usage: fc.option(fc.record({ p: fc.nat(1000), c: fc.nat(1000) })),
  last: fc.constantFrom('completed' as const, 'incomplete' as const, 'failed' as const),
  eol: fc.constantFrom('\n', '\r\n'),
  finalNewline: fc.boolean(),
});

describe('SseTap on a Responses stream under any chunking', () => {
  it("gives the client the same bytes with each event's response naming the client's model, and the same usage and counts", () => {
    fc.assert(
      fc.property(responsesStreams, fc.array(fc.nat(), { maxLength: 12 }), (s, cuts) => {
        const bytes = Buffer.from(renderResponses(s, s.upstreamModel));
        const whole = feed(bytes, [], false, responsesStream);
        const cut = feed(bytes, cuts, false, responsesStream);
        expect(cut).toEqual(whole);
        expect(cut.client).toBe(renderResponses(s, CLIENT_ID));
        // The last event's output was read (no hosted tool call in it): the tool line charges none.
        expect(cut.usage).toEqual(s.usage ? { promptTokens: s.usage.p, completionTokens: s.usage.c, hostedCalls: [] } : undefined);
        expect(cut.done).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
