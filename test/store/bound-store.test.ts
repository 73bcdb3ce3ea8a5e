/**
 * A wrapper that overrides one member of a store (the ledger archive's `usage`) keeps the rest of a class instance
 * whole: its prototype's methods bound to it, its state the store's own.
 */
import { MemoryStore } from '../../src/store/memory/memory-store';
import { boundStore } from '../../src/store/ports/store';
import { NO_EVENTS } from '../../src/store/records/events';

describe('boundStore', () => {
  it('answers every port through the store itself, so an override beside it loses nothing', async () => {
    const store = new MemoryStore();
    const wrapped = { ...boundStore(store), usage: async () => [] };
    const made = await wrapped.createAccount({ email: null, name: 'a', passwordHash: null, role: 'member', status: 'active' });
    expect(made.kind).toBe('created');
    if (made.kind !== 'created') return;
    // The account the wrapper made is the store's: one state, read back through the original.
    expect((await store.getAccount(made.account.id))?.id).toBe(made.account.id);
    wrapped.wantEvents({ ...NO_EVENTS, types: new Set(['account.created']) });
    await store.createAccount({ email: null, name: 'b', passwordHash: null, role: 'member', status: 'active' });
    expect(await store.eventAccounts(false)).toHaveLength(1);
    expect(await wrapped.usage()).toEqual([]);
  });
});
