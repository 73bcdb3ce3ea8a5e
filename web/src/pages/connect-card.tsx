/**
 * The overview's "Connect" card: the base URL an OpenAI client points at (this server's own origin, as the browser
 * reached it, plus /v1) and a first request in Python, JavaScript and curl, each with a copy button.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import type { ModelObject } from '../api-types';
import { CopyButton } from '../copy-button';
import { Link } from '../router';
import { useResource } from '../ui';

/** The environment variable the snippets read the key from, so no key is pasted into code. */
const KEY_VARIABLE = 'TOKENMETER_API_KEY';

const LANGUAGES = ['Python', 'JavaScript', 'curl'] as const;
type Language = (typeof LANGUAGES)[number];

/** A quoted string literal of Python and JavaScript (JSON's is both). */
const quoted = (text: string) => JSON.stringify(text);
/** Text inside a shell's single quotes. */
const shellQuoted = (text: string) => text.replace(/'/g, `'\\''`);

export function snippet(language: Language, baseUrl: string, model: string): string {
  switch (language) {
    case 'Python':
      return [
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url=${quoted(baseUrl)}, api_key=os.environ[${quoted(KEY_VARIABLE)}])`,
        'reply = client.chat.completions.create(',
        `    model=${quoted(model)},`,
        '    messages=[{"role": "user", "content": "Hello"}],',
        ')',
        'print(reply.choices[0].message.content)',
      ].join('\n');
    case 'JavaScript':
      return [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: ${quoted(baseUrl)}, apiKey: process.env.${KEY_VARIABLE} });`,
        'const reply = await client.chat.completions.create({',
        `  model: ${quoted(model)},`,
        "  messages: [{ role: 'user', content: 'Hello' }],",
        '});',
        'console.log(reply.choices[0].message.content);',
      ].join('\n');
    case 'curl':
      return [
        `curl ${baseUrl}/chat/completions \\`,
        `  -H "Authorization: Bearer $${KEY_VARIABLE}" \\`,
        '  -H "Content-Type: application/json" \\',
        `  -d '${shellQuoted(JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }))}'`,
      ].join('\n');
  }
}

/** The model the snippets name: the first that answers chat, or a placeholder while the list loads or has none. */
function chatModel(models: ModelObject[] | undefined): string {
  return models?.find((m) => m.endpoints.includes('chat'))?.id ?? 'MODEL';
}

export function ConnectCard() {
  const [models] = useResource(() => api.models());
  const [language, setLanguage] = useState<Language>('Python');
  const baseUrl = `${location.origin}/v1`;
  const code = snippet(language, baseUrl, chatModel(models.state === 'ready' ? models.data : undefined));
  return (
    <section class="card connect" aria-labelledby="connect-title">
      <h2 id="connect-title">Connect</h2>
      <p>
        Any OpenAI client works: point it at this base URL and use a key from <Link href="/console/keys">API keys</Link> (the snippets read
        it from <code>{KEY_VARIABLE}</code>).
      </p>
      <div class="copy-row">
        <span class="label">Base URL</span>
        <code class="base-url" data-testid="base-url">
          {baseUrl}
        </code>
        <CopyButton text={baseUrl} label="Copy the base URL" />
      </div>
      <div class="buttons" role="group" aria-label="Snippet language">
        {LANGUAGES.map((l) => (
          <button key={l} type="button" class="secondary" aria-pressed={l === language} onClick={() => setLanguage(l)}>
            {l}
          </button>
        ))}
      </div>
      {/* Focusable, so a keyboard can scroll a line longer than the card. */}
      <pre class="snippet" tabIndex={0} role="region" aria-label={`${language} snippet`} data-testid="snippet">
        <code>{code}</code>
      </pre>
      <CopyButton text={code} label={`Copy the ${language} snippet`} />
    </section>
  );
}
