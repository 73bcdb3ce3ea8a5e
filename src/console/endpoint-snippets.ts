/**
 * A first request to each endpoint a model serves, as the console shows it (the Connect card, the model page): the
 * OpenAI SDKs and curl for OpenAI's endpoints, the Anthropic SDK, Claude Code's environment and curl for Messages
 * and its token count, curl for rerank and score. Plain strings from the base URL and the model, no server code: the
 * console's bundle imports it too. The key is read from TOKENMETER_API_KEY, so none is pasted into code.
 */
export const KEY_VARIABLE = 'TOKENMETER_API_KEY';

export type SnippetLanguage = 'Python' | 'JavaScript' | 'Claude Code' | 'curl';
/** An endpoint's name as the models file and /v1/models give it (catalog/endpoints.ts; not imported: the bundle takes this file alone), or `count_tokens`. */
export type SnippetEndpoint = string;

export interface Snippet {
  language: SnippetLanguage;
  code: string;
}

export interface EndpointSnippets {
  endpoint: SnippetEndpoint;
  /** The path under the origin: `/v1/chat/completions`. */
  path: string;
  snippets: Snippet[];
}

/** A quoted string literal of Python and JavaScript (JSON's is both). */
const quoted = (text: string) => JSON.stringify(text);
/** Text inside a shell's single quotes. */
const shellQuoted = (text: string) => text.replace(/'/g, `'\\''`);

const HELLO = [{ role: 'user', content: 'Hello' }];

function curl(url: string, body: object, auth: 'bearer' | 'x-api-key' = 'bearer'): Snippet {
  const headers =
    auth === 'bearer'
      ? [`  -H "Authorization: Bearer $${KEY_VARIABLE}" \\`]
      : [`  -H "x-api-key: $${KEY_VARIABLE}" \\`, '  -H "anthropic-version: 2023-06-01" \\'];
  const code = [`curl ${url} \\`, ...headers, '  -H "Content-Type: application/json" \\', `  -d '${shellQuoted(JSON.stringify(body))}'`];
  return { language: 'curl', code: code.join('\n') };
}

/** The OpenAI JavaScript SDK: a client on the base URL, one call, one line printed. */
function openaiJs(v1: string, call: string, args: string[], print: string): Snippet {
  const code = [
    "import OpenAI from 'openai';",
    '',
    `const client = new OpenAI({ baseURL: ${quoted(v1)}, apiKey: process.env.${KEY_VARIABLE} });`,
    `const reply = await client.${call}({`,
    ...args.map((a) => `  ${a},`),
    '});',
    `console.log(${print});`,
  ];
  return { language: 'JavaScript', code: code.join('\n') };
}

function chat(v1: string, model: string): Snippet[] {
  const python = [
    'import os',
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url=${quoted(v1)}, api_key=os.environ[${quoted(KEY_VARIABLE)}])`,
    'reply = client.chat.completions.create(',
    `    model=${quoted(model)},`,
    '    messages=[{"role": "user", "content": "Hello"}],',
    ')',
    'print(reply.choices[0].message.content)',
  ];
  return [
    { language: 'Python', code: python.join('\n') },
    openaiJs(
      v1,
      'chat.completions.create',
      [`model: ${quoted(model)}`, "messages: [{ role: 'user', content: 'Hello' }]"],
      'reply.choices[0].message.content',
    ),
    curl(`${v1}/chat/completions`, { model, messages: HELLO }),
  ];
}

function messages(origin: string, model: string): Snippet[] {
  const sdk = [
    "import Anthropic from '@anthropic-ai/sdk';",
    '',
    '// The base URL without /v1: the SDK adds /v1/messages itself.',
    `const client = new Anthropic({ baseURL: ${quoted(origin)}, apiKey: process.env.${KEY_VARIABLE} });`,
    'const message = await client.messages.create({',
    `  model: ${quoted(model)},`,
    '  max_tokens: 1024,',
    "  messages: [{ role: 'user', content: 'Hello' }],",
    '});',
    "console.log(message.content.find((block) => block.type === 'text')?.text);",
  ];
  const claudeCode = [
    `export ANTHROPIC_BASE_URL=${quoted(origin)}`,
    `export ANTHROPIC_AUTH_TOKEN="$${KEY_VARIABLE}"  # or ANTHROPIC_API_KEY: the same key, sent as x-api-key`,
    `claude --model ${quoted(model)}`,
  ];
  return [
    { language: 'JavaScript', code: sdk.join('\n') },
    { language: 'Claude Code', code: claudeCode.join('\n') },
    curl(`${origin}/v1/messages`, { model, max_tokens: 1024, messages: HELLO }, 'x-api-key'),
  ];
}

const QUERY = 'What is the capital of France?';
const DOCUMENTS = ['Paris is the capital of France.', 'Berlin is the capital of Germany.'];

/** Each endpoint the model lists (and Messages' token count beside Messages), with its snippets, in the model's order. */
export function endpointSnippets(origin: string, model: { id: string; endpoints: readonly string[] }): EndpointSnippets[] {
  const v1 = `${origin}/v1`;
  const id = model.id;
  const out: EndpointSnippets[] = [];
  const add = (endpoint: SnippetEndpoint, path: string, snippets: Snippet[]) => out.push({ endpoint, path: `/v1${path}`, snippets });
  for (const endpoint of model.endpoints) {
    switch (endpoint) {
      case 'chat':
        add(endpoint, '/chat/completions', chat(v1, id));
        break;
      case 'completions':
        add(endpoint, '/completions', [
          openaiJs(v1, 'completions.create', [`model: ${quoted(id)}`, "prompt: 'Say hello'", 'max_tokens: 20'], 'reply.choices[0].text'),
          curl(`${v1}/completions`, { model: id, prompt: 'Say hello', max_tokens: 20 }),
        ]);
        break;
      case 'responses':
        add(endpoint, '/responses', [
          openaiJs(v1, 'responses.create', [`model: ${quoted(id)}`, "input: 'Hello'"], 'reply.output_text'),
          curl(`${v1}/responses`, { model: id, input: 'Hello' }),
        ]);
        break;
      case 'embeddings':
        add(endpoint, '/embeddings', [
          openaiJs(v1, 'embeddings.create', [`model: ${quoted(id)}`, "input: 'Hello'"], 'reply.data[0].embedding.length'),
          curl(`${v1}/embeddings`, { model: id, input: 'Hello' }),
        ]);
        break;
      case 'messages':
        add(endpoint, '/messages', messages(origin, id));
        add('count_tokens', '/messages/count_tokens', [curl(`${v1}/messages/count_tokens`, { model: id, messages: HELLO }, 'x-api-key')]);
        break;
      case 'rerank':
        add(endpoint, '/rerank', [curl(`${v1}/rerank`, { model: id, query: QUERY, documents: DOCUMENTS })]);
        break;
      case 'score':
        add(endpoint, '/score', [curl(`${v1}/score`, { model: id, text_1: QUERY, text_2: DOCUMENTS })]);
        break;
    }
  }
  return out;
}
