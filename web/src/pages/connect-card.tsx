/**
 * The overview's "Connect" card: the base URL an OpenAI client points at (this server's own origin, as the browser
 * reached it, plus /v1) and, for a model chosen from the list, a first request to each endpoint it serves (the
 * snippets of src/console/endpoint-snippets.ts, the model page's too), each with a copy button.
 */
import { useState } from 'preact/hooks';
import { endpointSnippets, KEY_VARIABLE, type SnippetLanguage } from '../../../src/console/endpoint-snippets';
import { api } from '../api';
import type { ModelObject } from '../api-types';
import { CopyButton } from '../copy-button';
import { Link } from '../router';
import { useResource } from '../ui';

/** While the list loads, or when it is empty: the chat snippets for a placeholder model. */
const PLACEHOLDER = { id: 'MODEL', endpoints: ['chat'] } as const;

/** The model the card opens on: the first that answers chat, else the first. */
function firstModel(models: readonly ModelObject[]): ModelObject | undefined {
  return models.find((m) => m.endpoints.includes('chat')) ?? models[0];
}

export function ConnectCard() {
  const [models] = useResource(() => api.models());
  const list = models.state === 'ready' ? models.data : [];
  const [modelId, setModelId] = useState<string | undefined>(undefined);
  const [endpoint, setEndpoint] = useState<string | undefined>(undefined);
  const [language, setLanguage] = useState<SnippetLanguage>('Python');
  const origin = location.origin;
  const baseUrl = `${origin}/v1`;
  const model = list.find((m) => m.id === modelId) ?? firstModel(list) ?? PLACEHOLDER;
  const endpoints = endpointSnippets(origin, model);
  const shown = endpoints.find((e) => e.endpoint === endpoint) ?? endpoints[0];
  const snippet = shown.snippets.find((s) => s.language === language) ?? shown.snippets[0];
  return (
    <section class="card connect" aria-labelledby="connect-title">
      <h2 id="connect-title">Connect</h2>
      <p>
        Any OpenAI client works: point it at this base URL and use a key from <Link href="/console/keys">API keys</Link> (the snippets read
        it from <code>{KEY_VARIABLE}</code>). Anthropic's clients and Claude Code take the origin without <code>/v1</code>.
      </p>
      <div class="copy-row">
        <span class="label">Base URL</span>
        <code class="base-url" data-testid="base-url">
          {baseUrl}
        </code>
        <CopyButton text={baseUrl} label="Copy the base URL" />
      </div>
      {list.length > 1 && (
        <div class="field">
          <label for="connect-model">Model</label>
          <select id="connect-model" value={model.id} onChange={(e) => setModelId((e.target as HTMLSelectElement).value)}>
            {list.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="buttons" role="group" aria-label="Endpoint">
        {endpoints.map((e) => (
          <button key={e.endpoint} type="button" class="secondary" aria-pressed={e === shown} onClick={() => setEndpoint(e.endpoint)}>
            {e.path}
          </button>
        ))}
      </div>
      <div class="buttons" role="group" aria-label="Snippet language">
        {shown.snippets.map((s) => (
          <button key={s.language} type="button" class="secondary" aria-pressed={s === snippet} onClick={() => setLanguage(s.language)}>
            {s.language}
          </button>
        ))}
      </div>
      {/* Focusable, so a keyboard can scroll a line longer than the card. */}
      <pre class="snippet" tabIndex={0} role="region" aria-label={`${snippet.language} snippet`} data-testid="snippet">
        <code>{snippet.code}</code>
      </pre>
      <CopyButton text={snippet.code} label={`Copy the ${snippet.language} snippet`} />
    </section>
  );
}
