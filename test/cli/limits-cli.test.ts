/** The CLI's limits commands end to end: the built CLI against the built proxy process, on a real redis-server. */
import request from 'supertest';
import { chatBody } from '../helpers/proxy';
import { cliFixture } from '../helpers/cli-fixture';

const ADMIN = 'cli-limits-admin-token-0123';

describe('tokenmeter CLI: limits', () => {
  const f = cliFixture(ADMIN, 'clil');
  const cli = f.cli;

  it('creates a key with limits, shows them with their use, changes and removes them', async () => {
    const created = await cli('keys', 'create', '--tokens', '10000', '--rpm', '1', '--max-concurrent', '3');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created key key_\w+ with a balance of 10,000 tokens, limits: 1 rpm, 3 in flight\.\n/);
    const id = /Created key (key_\w+)/.exec(created.stdout)![1];
    const secret = /\n {2}(sk-\S+)\n/.exec(created.stdout)![1];
    const post = () => request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(chatBody());
    await post().expect(200);
    expect((await post()).status).toBe(429);

    const shown = await cli('keys', 'show', id);
    expect(shown.stdout).toMatch(/limits\s+1 rpm, 3 in flight\n/);
    expect(shown.stdout).toMatch(/requests left\s+0 of 1 this minute\n/);
    expect(shown.stdout).toMatch(/in flight\s+0 of 3\n/);

    const changed = await cli('keys', 'limits', id, '--tpm', '50000');
    expect(changed.stdout).toBe(`Limits of ${id}: 50,000 tpm.\n`);
    await post().expect(200);
    expect((await cli('keys', 'limits', id, '--none')).stdout).toBe(`Limits of ${id}: none.\n`);
    const neither = await cli('keys', 'limits', id);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toBe('tokenmeter: name a limit (--rpm, --tpm, --max-concurrent) or --none.\n');
    const zero = await cli('keys', 'limits', id, '--rpm', '0');
    expect(zero.code).not.toBe(0);
  });

  it("sets an account's limits at creation and later, and shows them", async () => {
    const created = await cli('accounts', 'create', '--name', 'team', '--tokens', '1000', '--rpm', '100', '--json');
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account.limits).toEqual({ rpm: 100 });
    const changed = await cli('accounts', 'limits', account.id, '--rpm', '5', '--tpm', '2000');
    expect(changed.stdout).toBe(`Limits of ${account.id}: 5 rpm, 2,000 tpm.\n`);
    const shown = await cli('accounts', 'show', account.id);
    expect(shown.stdout).toMatch(/limits\s+5 rpm, 2,000 tpm\n/);
    expect(shown.stdout).toMatch(/requests left\s+5 of 5 this minute\n/);
    expect(shown.stdout).toMatch(/tokens left\s+2,000 of 2,000 this minute\n/);
  });
});
