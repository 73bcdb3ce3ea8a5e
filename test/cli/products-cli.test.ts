/** `tokenmeter products` and `tokenmeter codes`: the built CLI against the built proxy process, on a real redis-server. */
import { cliFixture } from '../helpers/cli-fixture';

const ADMIN = 'cli-admin-token-0123456789';

describe('tokenmeter products and codes', () => {
  const f = cliFixture(ADMIN, 'clip');
  const cli = f.cli;

  it('creates, lists and updates products', async () => {
    const created = await cli(
      'products',
      'create',
      '--id',
      'starter',
      '--name',
      'Starter',
      '--tokens',
      '100000',
      '--valid-days',
      '30',
      '--price',
      '500',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(
      /^Created product starter\.\n\nID\s+NAME\s+TOKENS\s+VALID DAYS\s+PRICE\s+ACTIVE\nstarter\s+Starter\s+100,000\s+30\s+5\.00 USD\s+yes\n$/,
    );

    const updated = await cli('products', 'update', 'starter', '--inactive', '--price', '450', '--json');
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: 'starter', active: false, price: 450 });

    const listed = await cli('products', 'list', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: 'starter', active: false })]);

    const missing = await cli('products', 'update', 'ghost', '--active');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No product with id 'ghost'");
  });

  it('makes codes shown once, and lists them without the code', async () => {
    const made = await cli('codes', 'create', '--tokens', '5000', '--valid-days', '7', '--count', '2', '--expires-in', '30d');
    expect(made.code).toBe(0);
    const codes = made.stdout.match(/TM(-[0-9A-Z]{4}){6}/g)!;
    expect(codes).toHaveLength(2);
    expect(made.stdout).toMatch(/^Made 2 codes for 5,000 tokens \(expire: 20\d\d-/);

    const listed = await cli('codes', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/ID\s+PRODUCT\s+TOKENS\s+STATUS/);
    expect(listed.stdout.match(/\bactive\b/g)).toHaveLength(2);
    for (const code of codes) expect(listed.stdout).not.toContain(code);

    const neither = await cli('codes', 'create', '--count', '1');
    expect(neither.code).toBe(1);
    expect(neither.stderr).toMatch(/product_id/);
  });
});
