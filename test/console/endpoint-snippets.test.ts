/**
 * The endpoint snippets, as a member copies them: the Connect card offers, for each model, each endpoint the model
 * lists and no other (chat, completions, responses, embeddings, messages and its token count, rerank, score), and each
 * snippet, copied with its button, runs as it is against the proxy and a test upstream and is charged (count_tokens
 * free); Claude Code's environment drives the Anthropic SDK as Claude Code would. The model page shows the same ones.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser as Chromium } from 'playwright-core';
import { launchBrowser, openPage, SCREENSHOTS, type WatchedPage } from '../helpers/browser';
import { accountWithPassword, admin, Browser, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { settledPage, signIn } from '../helpers/console-browser';
import { MODEL, settled } from '../helpers/proxy';
import { defaultReply, type Behaviour } from '../helpers/upstream';
import { messagesReply } from '../helpers/anthropic-upstream';

jest.setTimeout(180_000);

const run = promisify(execFile);
const EMAIL = 'snippets@example.org';
const CLAUDE = 'acme/claude-ish';
const EMBED = 'acme/embed';
const RERANK = 'acme/reranker';
/** What each model lists, and so the Connect card's endpoint buttons for it. */
const SERVED: Record<string, string[]> = {
  [MODEL]: ['/v1/chat/completions', '/v1/completions', '/v1/responses'],
  [CLAUDE]: ['/v1/messages', '/v1/messages/count_tokens'],
  [EMBED]: ['/v1/embeddings'],
  [RERANK]: ['/v1/rerank', '/v1/score'],
};
/** Run snippets where node_modules is, so their imports resolve as in the reader's project. */
const DIR = join(SCREENSHOTS, '..', 'snippets');

const json =
  (body: (call: { body: Record<string, any> }) => Record<string, unknown>): Behaviour =>
  (call, _req, res) => {
    const text = JSON.stringify({ model: call.body.model, ...body(call) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

/** A vLLM-shaped upstream for every endpoint: Messages and its count, rerank and score beside the OpenAI ones. */
const everyEndpoint: Behaviour = (call, req, res) => {
  if (call.path.startsWith('/v1/messages')) return messagesReply({ inputTokens: 7 })(call, req, res);
  if (call.path === '/v1/rerank') {
    const results = (call.body.documents as unknown[]).map((_, index) => ({ index, relevance_score: 1 / (index + 1) }));
    return json(() => ({ id: 'rerank-1', results, usage: { total_tokens: 21 } }))(call, req, res);
  }
  if (call.path === '/v1/score') {
    const data = (call.body.text_2 as unknown[]).map((_, index) => ({ index, object: 'score', score: 0.5 }));
    return json(() => ({ id: 'score-1', object: 'list', data, usage: { prompt_tokens: 12, total_tokens: 12 } }))(call, req, res);
  }
  return defaultReply(call, req, res);
};

describe('the endpoint snippets, copied and run', () => {
  let c: ConsoleFixture;
  let chromium: Chromium;
  let w: WatchedPage;
  let url: string;
  let key: { id: string; secret: string };
  /** Each snippet the Connect card gave, by model, endpoint path and language. */
  const copied = new Map<string, string>();

  beforeAll(async () => {
    c = await startConsole(
      'memory',
      {},
      {
        models: [
          {},
          { id: CLAUDE, endpoints: ['messages'] },
          { id: EMBED, endpoints: ['embeddings'], max_output_tokens: undefined },
          { id: RERANK, endpoints: ['rerank', 'score'], max_output_tokens: undefined },
        ],
      },
    );
    c.upstream.behave(everyEndpoint);
    url = c.proxy.url;
    const account = await accountWithPassword(c.s.store, EMAIL);
    await admin(url).post(`/admin/accounts/${account.id}/packages`, { tokens: 1_000_000 }).expect(201);
    const member = new Browser(url);
    await member.login(EMAIL);
    const made = (await member.call('post', '/console/api/keys', { name: 'snippets' })).body;
    key = { id: made.id, secret: made.key };
    chromium = await launchBrowser();
    w = await openPage(chromium, url);
    mkdirSync(DIR, { recursive: true });
  });
  afterAll(async () => {
    await w?.context.close();
    await chromium?.close();
    await c?.close();
  });

  /** Runs a snippet as its reader would, with the key in the variable it names; returns what it printed. */
  async function runSnippet(language: string, code: string, model: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, TOKENMETER_API_KEY: key.secret };
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL']) delete env[name];
    if (language === 'curl') return (await run('sh', ['-c', code], { env })).stdout;
    if (language === 'JavaScript') {
      writeFileSync(join(DIR, 'snippet.mjs'), code);
      return (await run(process.execPath, [join(DIR, 'snippet.mjs')], { env })).stdout;
    }
    // Claude Code: its environment, then the Anthropic SDK configured by that environment alone, as Claude Code is.
    const lines = code.split('\n');
    expect(lines.at(-1)).toBe(`claude --model "${model}"`);
    const client = [
      "import Anthropic from '@anthropic-ai/sdk';",
      'const message = await new Anthropic().messages.create({',
      "  model: process.argv[2], max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }],",
      '});',
      'console.log(message.content[0].text);',
    ];
    writeFileSync(join(DIR, 'claude-code.mjs'), client.join('\n'));
    const script = [...lines.slice(0, -1), `"${process.execPath}" "${join(DIR, 'claude-code.mjs')}" "${model}"`].join('\n');
    return (await run('sh', ['-c', script], { env })).stdout;
  }

  /** The key's ledger records, newest first. */
  const records = async () => {
    await settled(c.proxy);
    return c.s.store.usage({ keyId: key.id, limit: 100 });
  };

  test('the Connect card: each model’s endpoints, each snippet copied, run and charged', async () => {
    const { page } = w;
    await page.goto(`${url}/console/signin`);
    await settledPage(page, 'Sign in');
    await signIn(page, url, { email: EMAIL, password: PASSWORD });
    await page.goto(`${url}/console/`);
    await settledPage(page, 'Overview');
    const card = page.locator('section.connect');
    await expect(card.getByLabel('Model').locator('option').allInnerTexts()).resolves.toEqual(Object.keys(SERVED));
    for (const [model, paths] of Object.entries(SERVED)) {
      await card.getByLabel('Model').selectOption(model);
      const endpoints = card.getByRole('group', { name: 'Endpoint' }).getByRole('button');
      await expect(endpoints.allInnerTexts()).resolves.toEqual(paths);
      for (const path of paths) {
        await card.getByRole('group', { name: 'Endpoint' }).getByRole('button', { name: path, exact: true }).click();
        const languages = await card.getByRole('group', { name: 'Snippet language' }).getByRole('button').allInnerTexts();
        expect(languages.length).toBeGreaterThan(0);
        for (const language of languages) {
          await card.getByRole('group', { name: 'Snippet language' }).getByRole('button', { name: language, exact: true }).click();
          await card.getByRole('button', { name: `Copy the ${language} snippet` }).click();
          const code = String(await page.evaluate('navigator.clipboard.readText()'));
          expect(code).toBe(await card.getByTestId('snippet').innerText());
          expect(code).toContain(model);
          copied.set(`${model} ${path} ${language}`, code);
          if (language === 'Python') {
            // No Python OpenAI package here to run it: it names the base URL and the key's variable, as the others do.
            expect(code).toContain(`base_url="${url}/v1"`);
            expect(code).toContain('os.environ["TOKENMETER_API_KEY"]');
            continue;
          }
          const before = new Set((await records()).map((r) => r.requestId));
          const balance = (await c.s.store.getKey(key.id))!.balance;
          const calls = c.upstream.calls.length;
          const printed = await runSnippet(language, code, model);
          expect(printed.trim().length).toBeGreaterThan(0);
          expect(c.upstream.calls.length).toBe(calls + 1);
          expect(c.upstream.calls.at(-1)!.path).toBe(path);
          const fresh = (await records()).filter((r) => !before.has(r.requestId));
          if (path.endsWith('/count_tokens')) {
            // Free by design: counted, not charged.
            expect(JSON.parse(printed)).toEqual({ input_tokens: 7 });
            expect(fresh).toEqual([]);
            expect((await c.s.store.getKey(key.id))!.balance).toBe(balance);
            continue;
          }
          expect(fresh).toHaveLength(1);
          expect(fresh[0]).toMatchObject({ model, endpoint: path === '/v1/chat/completions' ? 'chat' : path.slice(4), estimated: false });
          expect(fresh[0].chargedTokens).toBeGreaterThan(0);
          expect((await c.s.store.getKey(key.id))!.balance).toBe(balance - fresh[0].chargedTokens);
        }
      }
    }
    // Claude Code's other key variable, ANTHROPIC_API_KEY (sent as x-api-key), works as the comment says.
    const claudeCode = copied.get(`${CLAUDE} /v1/messages Claude Code`)!;
    const apiKey = claudeCode.replace(/^export ANTHROPIC_AUTH_TOKEN=/m, 'export ANTHROPIC_API_KEY=');
    expect(apiKey).not.toBe(claudeCode);
    await runSnippet('Claude Code', apiKey, CLAUDE);
    expect(c.upstream.calls.at(-1)!.path).toBe('/v1/messages');
  });

  test('the model page shows each model’s endpoints with the same snippets, and no other', async () => {
    expect(copied.size).toBeGreaterThan(0);
    const { page } = w;
    await page.goto(`${url}/console/models`);
    await page.getByRole('heading', { level: 1, name: 'Models' }).waitFor();
    const shown = new Map<string, string>();
    for (const details of await page.locator('details.model-snippets').all()) {
      const model = await details.locator('summary').innerText();
      await details.locator('summary').click();
      for (const section of await details.locator('section.endpoint-snippets').all()) {
        const path = (await section.locator('h3').innerText()).replace(/^POST /, '');
        for (const pre of await section.locator('pre.snippet').all()) {
          shown.set(`${model} ${path} ${await pre.getAttribute('data-language')}`, await pre.innerText());
        }
      }
    }
    expect(shown).toEqual(copied);
  });
});
