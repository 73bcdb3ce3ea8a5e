/**
 * Every recipe in docs/ runs as written (issue 38): each page's marked blocks run in order in a scratch dir, against a
 * real Redis, the stand-in upstream the page starts and, for the archive, a real PostgreSQL. A page that loses its
 * markers, or a command that drifts from the code, fails here.
 */
import { randomBytes } from 'node:crypto';
import { readDoc } from './helpers/markdown';
import { recipeBlocks, startRecipes, type RecipeRun } from './helpers/recipes';
import { testRedisUrl } from './helpers/stores';

jest.setTimeout(60_000);

const pages = ['docs/first-hour.md'];

const running: RecipeRun[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((run) => run.stop()));
});

/** Runs the page's recipes with the test's Redis (a prefix of its own) and `env`; stopped after the test. */
async function runPage(page: string, env: Record<string, string> = {}): Promise<RecipeRun> {
  const run = await startRecipes(readDoc(page), {
    env: { REDIS_URL: testRedisUrl(), REDIS_PREFIX: `recipe-${randomBytes(4).toString('hex')}:`, ...env },
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

describe('the recipes run as written', () => {
  it('docs/first-hour.md: the stand-in, a proxy, funding an account and a charged request', async () => {
    await runPage('docs/first-hour.md');
  });
});
