/**
 * The model page's "Using a model" section: for each model, a first request to each endpoint it serves, in every
 * form endpoint-snippets.ts gives (the Connect card's snippets), as plain text to copy without JavaScript.
 */
import type { ModelObject } from '../api/model';
import { endpointSnippets, KEY_VARIABLE } from './endpoint-snippets';
import { html, type Html } from './html';

/** Where a model's snippets are on the page (the table's Endpoints cell links there). */
export const snippetsAnchor = (index: number) => `use-${index}`;

function modelSnippets(origin: string, model: ModelObject, index: number): Html {
  return html`<details class="model-snippets" id="${snippetsAnchor(index)}">
    <summary><code>${model.id}</code></summary>
    ${endpointSnippets(origin, model).map(
      (e) =>
        html`<section class="endpoint-snippets" data-endpoint="${e.endpoint}">
          <h3><code>POST ${e.path}</code></h3>
          ${e.snippets.map(
            (s) =>
              html`<p class="label">${s.language}</p>
                <pre class="snippet" tabindex="0" data-language="${s.language}"><code>${s.code}</code></pre>`,
          )}
        </section>`,
    )}
  </details>`;
}

/** The section, for the page as reached at `origin` (scheme, host and port). */
export function snippetsSection(origin: string, models: readonly ModelObject[]): Html | string {
  if (models.length === 0) return '';
  return html`<section aria-labelledby="use-title">
    <h2 id="use-title">Using a model</h2>
    <p>
      A first request to each endpoint a model serves. The snippets read your key from <code>${KEY_VARIABLE}</code>; the Anthropic SDK and
      Claude Code take the address without <code>/v1</code>.
    </p>
    ${models.map((m, i) => modelSnippets(origin, m, i))}
  </section>`;
}
