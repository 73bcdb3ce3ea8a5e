/**
 * Group commit (src/store/redis/group-commit.ts): what is added in one turn of the event loop goes out as one call
 * per group, at the end of the turn, each caller getting its own reply; a failed call fails every caller of it, and
 * none is left waiting.
 */
import { GroupCommit } from '../../../src/store/redis/group-commit';

/** A sender that records each group it was given and replies with each item doubled. */
function doubling() {
  const sent: number[][] = [];
  const send = async (group: readonly number[]) => {
    sent.push([...group]);
    return group.map((n) => n * 2);
  };
  return { sent, send };
}

describe('GroupCommit', () => {
  it('sends what one turn added as one call per group, in the order added, and gives each caller its own reply', async () => {
    const { sent, send } = doubling();
    const groups = new GroupCommit(send, { most: 10, oneItemsFault: () => false });
    const replies = Promise.all([groups.add('a', 1), groups.add('b', 2), groups.add('a', 3), groups.add('a', 4)]);
    // Nothing goes out before the turn ends: that is what lets the rest of the turn join.
    expect(sent).toEqual([]);
    expect(await replies).toEqual([2, 4, 6, 8]);
    expect(sent).toEqual([[1, 3, 4], [2]]);
  });

  it('starts a new group in the next turn', async () => {
    const { sent, send } = doubling();
    const groups = new GroupCommit(send, { most: 10, oneItemsFault: () => false });
    await groups.add('a', 1);
    await groups.add('a', 2);
    expect(sent).toEqual([[1], [2]]);
  });

  it('splits a group past its bound, so no call carries more than `most`', async () => {
    const { sent, send } = doubling();
    const groups = new GroupCommit(send, { most: 2, oneItemsFault: () => false });
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => groups.add('a', n)))).toEqual([2, 4, 6, 8, 10]);
    expect(sent).toEqual([[1, 2], [3, 4], [5]]);
  });

  /** A sender that fails any call holding 'bad', with a fault that is the item's or the store's. */
  const failing =
    (fault: string, sent: string[][] = []) =>
    async (group: readonly string[]) => {
      sent.push([...group]);
      if (group.includes('bad')) throw new Error(fault);
      return group.map((s) => s.toUpperCase());
    };

  it('fails every caller of a call that failed for a reason of the store’s, and only those', async () => {
    const groups = new GroupCommit(failing('store down'), { most: 10, oneItemsFault: (err) => (err as Error).message === 'bad input' });
    const results = await Promise.allSettled([groups.add('a', 'ok'), groups.add('a', 'bad'), groups.add('b', 'fine')]);
    expect(results).toEqual([
      { status: 'rejected', reason: new Error('store down') },
      { status: 'rejected', reason: new Error('store down') },
      { status: 'fulfilled', value: 'FINE' },
    ]);
  });

  it('sends each item of a group again alone when the fault may be one item’s, so only that item fails', async () => {
    // The bad neighbour: one settlement whose script errs must not fail the account's others of the same turn.
    const sent: string[][] = [];
    const groups = new GroupCommit(failing('bad input', sent), {
      most: 10,
      oneItemsFault: (err) => (err as Error).message === 'bad input',
    });
    const results = await Promise.allSettled([groups.add('a', 'ok'), groups.add('a', 'bad'), groups.add('a', 'fine')]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'OK' },
      { status: 'rejected', reason: new Error('bad input') },
      { status: 'fulfilled', value: 'FINE' },
    ]);
    expect(sent).toEqual([['ok', 'bad', 'fine'], ['ok'], ['bad'], ['fine']]);
  });

  it('fails only the item whose reply is an Error', async () => {
    const groups = new GroupCommit(async (group: readonly number[]) => group.map((n) => (n < 0 ? new Error(`bad ${n}`) : n)), {
      most: 10,
      oneItemsFault: () => true,
    });
    const results = await Promise.allSettled([groups.add('a', 1), groups.add('a', -2), groups.add('a', 3)]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: new Error('bad -2') },
      { status: 'fulfilled', value: 3 },
    ]);
  });

  it('fails every caller when the replies do not match the group, rather than hand one another’s', async () => {
    const groups = new GroupCommit(async (group: readonly number[]) => group.slice(1), { most: 10, oneItemsFault: () => false });
    const results = await Promise.allSettled([groups.add('a', 1), groups.add('a', 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason.message).toBe('a group of 2 got 1 replies');
  });
});
