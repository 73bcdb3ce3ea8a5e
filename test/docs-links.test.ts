/**
 * The manual holds together: every relative link in README.md and docs/*.md reaches a file that exists, and every
 * `#anchor` a heading of the page it points at (GitHub's anchors), so moving or renaming a section breaks a test, not a
 * reader's click. The same holds for the pointers into the manual from config/ (the models files, the alerts'
 * annotations, the dashboards), .env.example and the Dockerfile: each `docs/<page>.md#anchor` they name exists, and
 * none points at a README section (the manual moved out of README). And README stays a front door.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { anchors, linkTargets, manualPages, readDoc, ROOT, slug } from './helpers/markdown';

const pages = manualPages();

/** Where a link on `page` leads: the file (from the root) and the anchor, or null for a link off the repository. */
function resolve(page: string, target: string): { file: string; anchor?: string } | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // https:, mailto: …
  const [path, anchor] = target.split('#', 2);
  const file = path === '' ? page : relative(ROOT, normalize(join(ROOT, dirname(page), decodeURIComponent(path))));
  return { file, anchor };
}

const links = pages.flatMap((page) => linkTargets(readDoc(page)).map((target) => ({ page, target, to: resolve(page, target) })));
const internal = links.filter((l) => l.to !== null);

describe('the manual’s links', () => {
  it('finds the links it checks: README points into docs/, and the pages point at each other', () => {
    expect(pages).toContain('docs/configuration.md');
    expect(internal.filter((l) => l.page === 'README.md' && l.to!.file.startsWith('docs/')).length).toBeGreaterThan(10);
    expect(internal.filter((l) => l.page !== 'README.md' && l.to!.anchor !== undefined).length).toBeGreaterThan(10);
  });

  it('leads every relative link to a file or folder of the repository, inside it', () => {
    const broken = internal.filter(({ to }) => to!.file.startsWith('..') || !existsSync(join(ROOT, to!.file)));
    expect(broken.map(({ page, target }) => `${page}: ${target}`)).toEqual([]);
  });

  it('leads every #anchor to a heading of the page it names', () => {
    const broken = internal.filter(({ to }) => {
      if (to!.anchor === undefined) return false;
      const file = join(ROOT, to!.file);
      if (!existsSync(file) || statSync(file).isDirectory() || !file.endsWith('.md')) return true;
      return !anchors(readDoc(to!.file)).has(to!.anchor);
    });
    expect(broken.map(({ page, target }) => `${page}: ${target}`)).toEqual([]);
  });

  it('names only tests and scripts that exist, where a page says which test holds a guarantee', () => {
    // A renamed test left docs/guarantees.md pointing at three files that were gone: the proof a reader looks for.
    const named = pages.flatMap((page) =>
      [...readDoc(page).matchAll(/`((?:test|scripts|bench)\/[\w./-]+\.(?:ts|sh|js|mjs))`/g)].map((m) => ({ page, path: m[1] })),
    );
    expect(named.filter((n) => n.page === 'docs/guarantees.md').length).toBeGreaterThan(20);
    expect(named.filter(({ path }) => !existsSync(join(ROOT, path))).map(({ page, path }) => `${page}: ${path}`)).toEqual([]);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug('The charge, shown')).toBe('the-charge-shown');
    expect(slug('Upgrading from a version before accounts')).toBe('upgrading-from-a-version-before-accounts');
    expect(slug('`usage.settled` as CloudEvents')).toBe('usagesettled-as-cloudevents');
    expect([...anchors('# A\n\n```sh\n# not a heading\n```\n\n## A\n## B: c\n')]).toEqual(['a', 'a-1', 'b-c']);
  });
});

/** Every text file under config/, with .env.example and the Dockerfile: what an operator reads beside the manual. */
function configFiles(dir = 'config'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? configFiles(`${dir}/${e.name}`) : /\.(ya?ml|json|conf)$/.test(e.name) ? [`${dir}/${e.name}`] : [],
  );
}
const operatorFiles = [...configFiles(), '.env.example', 'Dockerfile'];

describe('the pointers into the manual from config/, .env.example and the alerts', () => {
  const mentions = operatorFiles.flatMap((file) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g)].map((m) => ({
      file,
      page: `docs/${m[1]}`,
      anchor: m[2],
    })),
  );

  it('finds them: the models files, the alerts and .env.example point into docs/', () => {
    for (const file of ['config/models.yaml', 'config/models.example.yaml', 'config/prometheus/alerts.yml', '.env.example'])
      expect(mentions.some((m) => m.file === file)).toBe(true);
  });

  it('leads each to a page of docs/ and a heading of it', () => {
    const broken = mentions.filter(
      ({ page, anchor }) => !existsSync(join(ROOT, page)) || (anchor !== undefined && !anchors(readDoc(page)).has(anchor)),
    );
    expect(broken.map(({ file, page, anchor }) => `${file}: ${page}${anchor ? `#${anchor}` : ''}`)).toEqual([]);
  });

  it('sends no one to a README section: the manual lives in docs/', () => {
    const stale = operatorFiles.filter((file) => /README[,:]? ["“(]|README's|README, /.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(stale).toEqual([]);
  });
});

test('README is a front door: at most 300 lines, with a line in its map for every page of docs/', () => {
  const readme = readDoc('README.md');
  expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  const mapped = new Set(internal.filter((l) => l.page === 'README.md').map((l) => l.to!.file));
  expect(pages.filter((p) => p.startsWith('docs/') && !mapped.has(p))).toEqual([]);
});
