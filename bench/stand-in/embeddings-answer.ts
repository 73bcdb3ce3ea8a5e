/**
 * The stand-in's embeddings, as vLLM and OpenAI write them: one vector per input, of the requested `dimensions` (else
 * the model's default), as floats or, for `encoding_format: "base64"` (the openai SDK's default), as the base64 of
 * little-endian float32s. Built once per (model, inputs, dimensions, format, prompt): the bench sends the same batch.
 */

export interface EmbeddingsAnswer {
  model: string;
  inputs: number;
  dimensions: number;
  base64: boolean;
  promptTokens: number;
}

const answers = new Map<string, string>();

/** A unit-free but distinct vector per input position, so a client that mixes them up can tell. */
function vector(index: number, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => Math.round(Math.sin(index + i + 1) * 1e6) / 1e6);
}

function base64Of(floats: number[]): string {
  const bytes = Buffer.alloc(floats.length * 4);
  for (let i = 0; i < floats.length; i++) bytes.writeFloatLE(floats[i], i * 4);
  return bytes.toString('base64');
}

export function embeddingsJson(a: EmbeddingsAnswer): string {
  const key = `${a.model}\n${a.inputs}\n${a.dimensions}\n${a.base64}\n${a.promptTokens}`;
  let text = answers.get(key);
  if (text) return text;
  const data = Array.from({ length: a.inputs }, (_, index) => {
    const floats = vector(index, a.dimensions);
    return { index, object: 'embedding', embedding: a.base64 ? base64Of(floats) : floats };
  });
  const usage = { prompt_tokens: a.promptTokens, total_tokens: a.promptTokens, completion_tokens: 0, prompt_tokens_details: null };
  // vLLM's key order (id, object, created, model, data, usage).
  text = JSON.stringify({ id: 'embd-standin', object: 'list', created: 1700000000, model: a.model, data, usage });
  if (answers.size > 256) answers.clear();
  answers.set(key, text);
  return text;
}
