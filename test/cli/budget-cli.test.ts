/** The CLI's budget commands end to end: the built CLI against the built proxy process, on a real redis-server. */
import request from 'supertest';
import { chatBody } from '../helpers/proxy';
import { cliFixture } from '../helpers/cli-fixture';

const ADMIN = 'cli-budget-admin-token-0123';

describe('tokenmeter CLI: budgets', () => {
  const f = cliFixture(ADMIN, 'clib');
  const cli = f.cli;

  it('creates a key with a budget, shows what its period spent, changes and removes it', async () => {
    const created = await cli('keys', 'create', '--tokens', '10000', '--budget', '1/day');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created key key_\w+ with a balance of 10,000 tokens, budget: 1 per day\.\n/);
    const id = /Created key (key_\w+)/.exec(created.stdout)![1];
    const secret = /\n {2}(sk-\S+)\n/.exec(created.stdout)![1];
    const post = () => request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(chatBody());
    expect((await post()).body.error.code).toBe('budget_exceeded');

    const changed = await cli('keys', 'budget', id, '50000/week');
    expect(changed.stdout).toBe(`Budget of ${id}: 50,000 per week.\n`);
    await post().expect(200);
    const shown = await cli('keys', 'show', id);
    expect(shown.stdout).toMatch(/budget\s+50,000 per week\n/);
    expect(shown.stdout).toMatch(/budget spent\s+[\d,]+ \(\+[\d,]+ reserved\), resets \d{4}-\d\d-\d\dT00:00:00Z\n/);

    expect((await cli('keys', 'budget', id, '--none')).stdout).toBe(`Budget of ${id}: none.\n`);
    const neither = await cli('keys', 'budget', id);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toBe('tokenmeter: name a budget (such as 100000/day) or --none.\n');
    const bad = await cli('keys', 'budget', id, '100/year');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/<tokens>\/<day\|week\|month>/);
  });

  it("sets an account's budget at creation and later, and shows it", async () => {
    const created = await cli('accounts', 'create', '--name', 'team', '--tokens', '1000', '--budget', '900/month', '--json');
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account.budget).toMatchObject({ tokens: 900, period: 'month', spent: 0, reserved: 0 });
    const changed = await cli('accounts', 'budget', account.id, '2000/day');
    expect(changed.stdout).toBe(`Budget of ${account.id}: 2,000 per day.\n`);
    const shown = await cli('accounts', 'show', account.id);
    expect(shown.stdout).toMatch(/budget\s+2,000 per day\n/);
    expect(shown.stdout).toMatch(/budget spent\s+0 \(\+0 reserved\), resets/);
  });
});
