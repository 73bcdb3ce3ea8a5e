/** `tokenmeter usage export --since/--until` through the built CLI: the range is honoured, not taken by `usage`. */
import request from 'supertest';
import { chatBody } from '../helpers/proxy';
import { cliFixture } from '../helpers/cli-fixture';
import { eventually } from '../helpers/eventually';

const ADMIN = 'cli-export-admin-token-0123456789';

jest.setTimeout(60_000);

describe('tokenmeter usage export --since/--until', () => {
  const f = cliFixture(ADMIN, 'cliexp');

  it('exports only the records inside the range, with records before and inside it in the ledger', async () => {
    const key = JSON.parse((await f.cli('keys', 'create', '--tokens', '100000', '--json')).stdout) as { id: string; key: string };
    const ask = () =>
      request(f.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody()).expect(200);
    const settled = async (n: number) =>
      eventually(async () => {
        const r = JSON.parse((await f.cli('usage', '--key-id', key.id, '--json')).stdout) as { created: number }[];
        expect(r).toHaveLength(n);
        return r;
      });
    await ask();
    const [before] = await settled(1);
    // Records are stamped in whole seconds: the range starts on the second after the first record's.
    const since = before.created + 1;
    await new Promise((r) => setTimeout(r, (since - Date.now() / 1000) * 1000 + 50));
    await ask();
    await ask();
    const all = await settled(3);
    const inside = all.filter((u) => u.created >= since);
    expect(inside).toHaveLength(2);

    const mine = (out: string) =>
      out
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { key_id: string; created: number })
        .filter((u) => u.key_id === key.id);
    const exported = await f.cli('usage', 'export', '--since', String(since));
    expect(exported.code).toBe(0);
    expect(mine(exported.stdout).map((u) => u.created)).toEqual(inside.map((u) => u.created));
    const upTo = await f.cli('usage', 'export', '--until', String(since - 1));
    expect(mine(upTo.stdout).map((u) => u.created)).toEqual([before.created]);
    // `usage` itself still takes its own --since.
    const listed = JSON.parse((await f.cli('usage', '--key-id', key.id, '--since', String(since), '--json')).stdout) as unknown[];
    expect(listed).toHaveLength(2);
  });
});
