/** The public model page, /console/models: the served catalog as plain HTML, readable without JavaScript. */
import { ENDPOINT_PATHS, type EndpointName } from '../catalog/endpoints';
import { SAMPLING_PARAMETERS } from '../catalog/capabilities-schema';
import type { ModelObject } from '../api/model';
import { html, type Html } from './html';
import { snippetsAnchor, snippetsSection } from './model-snippets';
import { topbar, type Viewer } from './server-nav';

const count = (n: number) => n.toLocaleString('en-US');
const yesNo = (b: boolean) => (b ? 'yes' : 'no');

function developerMessages(role: NonNullable<ModelObject['capabilities']>['developer_role']): string {
  if (role === 'system') return 'yes (sent as system)';
  return yesNo(role);
}

function sampling(params: readonly string[]): string {
  return params.length === SAMPLING_PARAMETERS.length ? 'all' : params.length === 0 ? 'none' : params.join(', ');
}

function price(p: ModelObject['pricing']): Html {
  if (!p) return html`<span class="muted">not listed</span>`;
  const money = (v: number) => `${v.toLocaleString('en-US', { maximumFractionDigits: 4 })} ${p.currency}`;
  return html`<dl class="pairs">
      <div>
        <dt>Input</dt>
        <dd>${money(p.input)}</dd>
      </div>
      ${
        p.cached_input !== undefined
          ? html`<div>
              <dt>Cached input</dt>
              <dd>${money(p.cached_input)}</dd>
            </div>`
          : ''
      }
      ${
        p.output === undefined
          ? ''
          : html`<div>
              <dt>Output</dt>
              <dd>${money(p.output)}</dd>
            </div>`
      }
    </dl>
    <span class="muted">per million tokens</span>`;
}

/**
 * What one token draws from a token package (the model's quota weights): what the buyer of a package compares, since
 * a model that draws 4 per output token drains a package four times as fast as one that draws 1.
 */
function drawn(w: ModelObject['quota_weight']): Html {
  const amount = (v: number) => `${v.toLocaleString('en-US', { maximumFractionDigits: 4 })} package ${v === 1 ? 'token' : 'tokens'}`;
  const pair = (label: string, v: number) =>
    html`<div>
      <dt>${label}</dt>
      <dd>${amount(v)}</dd>
    </div>`;
  return html`<dl class="pairs">
      ${pair('Input', w.input)} ${w.cached_input !== w.input ? pair('Cached input', w.cached_input) : ''}
      ${w.output === undefined ? '' : pair('Output', w.output)}
    </dl>
    <span class="muted">per token</span>`;
}

/** The endpoints a model serves, by path, and a link to their snippets (when the page shows them). */
function endpointList(endpoints: readonly EndpointName[], snippets: string | undefined): Html {
  return html`<ul class="plain">
      ${endpoints.map((e) => html`<li><code>/v1${ENDPOINT_PATHS[e]}</code></li>`)}
    </ul>
    ${snippets === undefined ? '' : html`<a href="#${snippets}">Snippets</a>`}`;
}

/** The hosted tools a model allows, each with what a call costs; "None" for function and custom tools only. */
function hostedTools(tools: ModelObject['hosted_tools']): Html | string {
  if (!tools) return 'None';
  return html`${Object.entries(tools).map(
    ([type, t], i) => html`${i > 0 ? ', ' : ''}<code>${type}</code> (${count(t.per_call_tokens)} tokens a call, at most ${t.max_calls})`,
  )}`;
}

/** An embeddings model's cell: what it makes (vectors, of how many dimensions), where a chat model lists what it accepts. */
function embeddingsCell(m: ModelObject): Html {
  return html`<dl class="pairs">
    <div>
      <dt>Makes</dt>
      <dd>embeddings</dd>
    </div>
    ${
      m.dimensions === undefined
        ? ''
        : html`<div>
            <dt>Dimensions</dt>
            <dd>${count(m.dimensions)}</dd>
          </div>`
    }
  </dl>`;
}

/** A model id may break after its slash, and only there (a phone too narrow for the whole id on one line). */
function modelId(id: string): Html {
  const slash = id.indexOf('/');
  return slash < 0 ? html`<code>${id}</code>` : html`<code>${id.slice(0, slash + 1)}<wbr />${id.slice(slash + 1)}</code>`;
}

/**
 * A model's row: what a reader compares first (the id, its sizes, endpoints, what it costs and draws) in columns; its
 * capabilities behind a Details toggle under the id, so the table fits a laptop's column.
 */
function modelRow(m: ModelObject, snippets: string | undefined): Html {
  const c = m.capabilities;
  return html`<tr>
    <th scope="row" data-label="Model" class="model-name">
      ${modelId(m.id)}<br /><span class="muted">by ${m.owned_by}</span>
      <details>
        <summary>${c ? 'Capabilities' : 'What it makes'}</summary>
        ${c ? capabilityList(c, m.hosted_tools) : embeddingsCell(m)}
      </details>
    </th>
    <td data-label="Context length">
      <span class="nowrap">${count(m.context_length)} tokens</span><br />
      <span class="muted"
        >${m.max_output_tokens === undefined ? 'no output' : html`at most <span class="nowrap">${count(m.max_output_tokens)} tokens</span> out`}</span
      >
    </td>
    <td data-label="Endpoints">${endpointList(m.endpoints, snippets)}</td>
    <td data-label="Pricing">
      ${price(m.pricing)}
      <p class="draws">Draws from a package:</p>
      ${drawn(m.quota_weight)}
    </td>
  </tr>`;
}

function capabilityList(c: NonNullable<ModelObject['capabilities']>, tools: ModelObject['hosted_tools']): Html {
  return html`<dl class="pairs">
    <div>
      <dt>Tools</dt>
      <dd>${yesNo(c.tools)}</dd>
    </div>
    <div>
      <dt>JSON mode</dt>
      <dd>${yesNo(c.json_mode)}</dd>
    </div>
    <div>
      <dt>Vision</dt>
      <dd>${yesNo(c.vision)}</dd>
    </div>
    <div>
      <dt>Developer messages</dt>
      <dd>${developerMessages(c.developer_role)}</dd>
    </div>
    <div>
      <dt>Sampling parameters</dt>
      <dd>${sampling(c.sampling_parameters)}</dd>
    </div>
    <div>
      <dt>Hosted tools</dt>
      <dd>${hostedTools(tools)}</dd>
    </div>
  </dl>`;
}

/**
 * The whole page, with the console's navigation for a signed-in `viewer` and, given the `origin` it was reached at,
 * each model's snippets; every string from the models file goes through `html`'s escaping.
 */
export function modelPage(models: readonly ModelObject[], viewer?: Viewer, origin?: string): string {
  const body =
    models.length === 0
      ? html`<p class="empty">No models are served right now.</p>`
      : // Named: a screen reader announces the region.
        html`<div class="table-wrap" role="region" aria-label="Models">
          <table class="models">
            <caption>
              ${models.length === 1 ? '1 model' : `${models.length} models`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Context length</th>
                <th scope="col">Endpoints</th>
                <th scope="col">Pricing</th>
              </tr>
            </thead>
            <tbody>
              ${models.map((m, i) => modelRow(m, origin === undefined ? undefined : snippetsAnchor(i)))}
            </tbody>
          </table>
        </div>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Models · tokenmeter</title>
        <link rel="icon" href="/console/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        ${topbar('/console/models', viewer)}
        <main id="main" tabindex="-1">
          <h1>Models</h1>
          <p>
            Every model this service serves, as <code>GET /v1/models</code> lists it. Send its id as <code>model</code> to the endpoints it
            lists (OpenAI's chat, completions, responses and embeddings, Anthropic's messages, rerank and score); each model's snippets
            below show a first request to each. A token package pays for every model: what one token draws from it differs by model.
          </p>
          ${body} ${origin === undefined ? '' : snippetsSection(origin, models)}
        </main>
      </body>
    </html>`.value;
}
