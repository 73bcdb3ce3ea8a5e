/** The tokenmeter CLI end to end: the built CLI against the built proxy process, on a real redis-server. */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { PROMPT_TOKENS } from '../helpers/upstream';
import { chatBody, MODEL } from '../helpers/proxy';
import { runCli } from '../helpers/processes';
import { cliFixture } from '../helpers/cli-fixture';
import { claimPort } from '../helpers/ports';
import { eventually } from '../helpers/eventually';

const ADMIN = 'cli-admin-token-0123456789';

// Each test runs the built CLI a dozen times, a node start each: on a loaded machine that passed 20 s.
jest.setTimeout(60_000);

describe('tokenmeter CLI', () => {
  const f = cliFixture(ADMIN, 'cli');
  const cli = f.cli;

  it('creates a key, grants a package, shows the balance drop after a request, lists usage and revokes', async () => {
    const created = await cli('keys', 'create', '--name', 'demo', '--tokens', '1000', '--json');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ name: 'demo', balance: 1000, key: expect.stringMatching(/^sk-/) });

    const human = await cli('keys', 'create', '--name', 'other', '--models', MODEL, '--expires-in', '30d');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /Created key key_\w+ \(other\) with a balance of 0 tokens\.\nSecret, shown only now; store it safely:\n\n {2}sk-[\w-]{43}\n/,
    );

    const granted = await cli('packages', 'grant', key.id, '--tokens', '500', '--expires-in', '7d');
    expect(granted.code).toBe(0);
    expect(granted.stdout).toMatch(new RegExp(`^Granted 500 tokens to ${key.id} as pkg_\\w+ \\(usable: 500, expires: 20\\d\\d-`));

    await request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody()).expect(200);
    // Settlement lands just after the response: wait for it, bounded.
    const shown = await eventually(async () => {
      const r = await cli('keys', 'show', key.id);
      expect(r.stdout).toMatch(/requests\s+1\n/);
      return r;
    });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`balance\\s+${(1500 - PROMPT_TOKENS - 5).toLocaleString('en-US')}\\n`));
    expect(shown.stdout).toMatch(/PACKAGE\s+TOKENS\s+REMAINING\s+EXPIRES\s+CREATED/);
    const shownJson = JSON.parse((await cli('keys', 'show', key.id, '--json')).stdout);
    expect(shownJson.balance).toBe(1500 - PROMPT_TOKENS - 5);

    const list = await cli('keys', 'list');
    expect(list.stdout.split('\n')[0]).toMatch(
      /^ID\s+ACCOUNT\s+NAME\s+PREFIX\s+CREATED\s+EXPIRES\s+LAST USED\s+SPENT\s+CAP\s+STATUS\s+MODELS$/,
    );
    expect(list.stdout).toContain(key.id);
    expect(list.stdout).not.toContain(key.key);

    const usage = await cli('usage', '--key-id', key.id);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toContain(MODEL);
    const usageJson = JSON.parse((await cli('usage', '--key-id', key.id, '--json')).stdout);
    expect(usageJson).toHaveLength(1);
    expect(usageJson[0]).toMatchObject({ key_id: key.id, charged_tokens: PROMPT_TOKENS + 5 });

    const revoked = await cli('keys', 'revoke', key.id);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^Revoked ${key.id} at 20`));
    await request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody()).expect(401);
  });

  it('says clearly when the admin token is refused', async () => {
    const res = await runCli(['keys', 'list'], { TOKENMETER_URL: f.proxy.url, TOKENMETER_ADMIN_TOKEN: 'wrong-token-0123456789' });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe("tokenmeter: the admin token was refused: set TOKENMETER_ADMIN_TOKEN to the proxy's ADMIN_TOKEN.\n");
  });

  it('says clearly when the token is not set', async () => {
    const res = await runCli(['keys', 'list'], { TOKENMETER_URL: f.proxy.url });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('set TOKENMETER_ADMIN_TOKEN');
  });

  it('says clearly when the server cannot be reached', async () => {
    const url = `http://127.0.0.1:${await claimPort()}`;
    const res = await runCli(['keys', 'list', '--url', url], { TOKENMETER_ADMIN_TOKEN: ADMIN });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`tokenmeter: cannot reach ${url} (ECONNREFUSED). Is the proxy running? Use --url or TOKENMETER_URL.\n`);
  });

  it('passes the API’s 400 message through and rejects bad arguments before calling', async () => {
    const bad = await cli('keys', 'create', '--models', 'acme/unknown');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("'acme/unknown' is not a served model");
    const args = await cli('packages', 'grant', 'key_x', '--tokens', 'many');
    expect(args.code).not.toBe(0);
    expect(args.stderr).toContain('must be a whole number');
  });

  it('creates a console admin with a password from stdin, lists, shows, disables and grants to accounts', async () => {
    const email = `admin-${randomBytes(3).toString('hex')}@example.com`;
    const created = await runCli(
      ['accounts', 'create', '--email', email, '--name', 'Root', '--role', 'admin', '--password-stdin', '--json'],
      f.env,
      'a long enough password\n',
    );
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('');
    const account = JSON.parse(created.stdout);
    expect(account).toMatchObject({ email, name: 'Root', role: 'admin', has_password: true });

    const argvPassword = await cli('accounts', 'create', '--email', `x${email}`, '--password', 'visible password', '--json');
    expect(argvPassword.code).toBe(0);
    expect(argvPassword.stderr).toContain('prefer --password-stdin');
    const short = await runCli(['accounts', 'create', '--email', `y${email}`, '--password-stdin'], f.env, 'short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/password.*at least 10 characters/);

    const listed = await cli('accounts', 'list', '--search', email);
    expect(listed.stdout).toContain(account.id);
    expect(listed.stdout).toContain('admin');

    const granted = await cli('accounts', 'grant', account.id, '--tokens', '1000');
    expect(granted.stdout).toMatch(new RegExp(`^Granted 1,000 tokens to ${account.id} as pkg_`));
    const key = JSON.parse((await cli('keys', 'create', '--account', account.id, '--limit-tokens', '400', '--json')).stdout);
    expect(key).toMatchObject({ account_id: account.id, limit_tokens: 400, balance: 400 });
    const shown = await cli('accounts', 'show', account.id);
    expect(shown.stdout).toMatch(/balance\s+1,000/);
    expect(shown.stdout).toContain(key.id);

    const disabled = await cli('accounts', 'disable', account.id);
    expect(disabled.stdout).toContain('Disabled');
    const refused = await request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody());
    expect(refused.status).toBe(401);
    expect((await cli('accounts', 'enable', account.id)).code).toBe(0);
    await request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody()).expect(200);
    await eventually(async () => {
      const usage = JSON.parse((await cli('usage', '--account-id', account.id, '--json')).stdout);
      expect(usage).toMatchObject([{ account_id: account.id, key_id: key.id }]);
    });
  });
});
