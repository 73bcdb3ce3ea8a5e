/**
 * Every recipe in docs/ runs as written (issue 38): each page's marked blocks run in order in a scratch dir, against a
 * real Redis, the stand-in upstream the page starts and, for the archive, a real PostgreSQL. A page that loses its
 * markers, or a command that drifts from the code, fails here.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDoc, ROOT } from './helpers/markdown';
import { startPostgresServer, type PostgresServer } from './helpers/postgres-server';
import { recipeBlocks, startRecipes, type RecipeOptions, type RecipeRun } from './helpers/recipes';

import { testRedisUrl } from './helpers/stores';

jest.setTimeout(120_000);

const pages = ['docs/first-hour.md', 'docs/upstream-pools.md', 'docs/webhooks-and-events.md', 'docs/library.md', 'docs/ledger-archive.md'];

let postgres: PostgresServer | undefined;
const running: RecipeRun[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((run) => run.stop()));
  await postgres?.destroy();
  postgres = undefined;
});

/** Runs the page's recipes with the test's Redis (a prefix of its own) and `env`; stopped after the test. */
async function runPage(page: string, options: Omit<RecipeOptions, 'env'> = {}): Promise<RecipeRun> {
  const run = await startRecipes(readDoc(page), {
    env: { REDIS_URL: testRedisUrl(), REDIS_PREFIX: `recipe-${randomBytes(4).toString('hex')}:` },
    ...options,
  });
  running.push(run);
  return run;
}

describe.each(pages)('%s', (page) => {
  it('marks every fenced block as a recipe or an example, and has a runnable one', () => {
    const blocks = recipeBlocks(readDoc(page));
    expect(blocks.filter((b) => b.kind === 'unmarked').map((b) => `line ${b.line}`)).toEqual([]);
    expect(blocks.some((b) => b.kind === 'run')).toBe(true);
  });
});

describe('the recipe runner', () => {
  // A page whose server starts and whose next command fails: the run rejects naming the block, and the server is gone.
  const page = [
    '<!-- recipe: file server.js -->',
    '```js',
    "require('node:http').createServer((_req, res) => res.end('up')).listen(4000);",
    '```',
    '<!-- recipe: background http://localhost:4000/ -->',
    '```sh',
    'node server.js',
    '```',
    '<!-- recipe -->',
    '```sh',
    'curl -sf localhost:4000/ | grep -x up',
    'false',
    '```',
  ].join('\n');

  it('rejects at the first command that fails, and stops what the page started', async () => {
    const error = await startRecipes(page).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(/the recipe at line 10 exited with 1/);
    const port = Number(/waiting for http:\/\/127\.0\.0\.1:(\d+)/.exec(error!.message)?.[1]);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});

describe('the recipes run as written', () => {
  it('docs/first-hour.md: the stand-in, a proxy, funding an account and a charged request', async () => {
    await runPage('docs/first-hour.md');
  });

  it('docs/upstream-pools.md: two stand-ins in one pool, requests spread over both', async () => {
    const run = await runPage('docs/upstream-pools.md');
    // Six requests, one at a time, over two servers: each answered some (ties go round the pool).
    const metrics = await (await fetch(`http://127.0.0.1:${run.port(8080)}/metrics`)).text();
    for (const written of [8001, 8002]) {
      const answered = new RegExp(
        `^tokenmeter_upstream_requests_total\\{[^}]*server="http://127\\.0\\.0\\.1:${run.port(written)}"[^}]*outcome="answered"[^}]*\\} (\\d+)`,
        'm',
      );
      expect(Number(answered.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
    }
  });

  it('docs/ledger-archive.md: a least-privilege role, the archive on it, a request shipped', async () => {
    postgres = await startPostgresServer();
    await runPage('docs/ledger-archive.md', { ports: { 5432: postgres.port } });
  });

  it('docs/webhooks-and-events.md: an endpoint, a receiver that checks signatures, the events of a new key', async () => {
    const run = await runPage('docs/webhooks-and-events.md');
    // What the receiver accepted (a bad signature is answered 400 and never kept).
    const types = readFileSync(join(run.dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.sort()).toEqual(['account.created', 'key.created', 'package.granted']);
  });

  it('docs/library.md: installed by path beside the checkout, an app mounting it charges a request', async () => {
    const run = await runPage('docs/library.md', { links: { tokenmeter: ROOT } });
    // The recipe shows the balance after its request: 1,000 less the charge.
    const balance = /\{"balance":(\d+)\}/.exec(run.transcript.join('\n'));
    expect(Number(balance?.[1])).toBeLessThan(1000);
  });
});
