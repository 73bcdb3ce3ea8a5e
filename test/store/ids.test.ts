/**
 * Key ids in the ledger: compactKeyId keeps a key id of newId's form in 19 characters and keyIdFromCompact gives back
 * exactly that id, for every id of the form (leading zeros, the largest sequence); any other id is not compacted (""),
 * so the ledger keeps it as it is rather than a different id.
 */
import { compactKeyId, keyIdFromCompact, newId } from '../../src/store/ids';

describe('compact key ids', () => {
  it('round-trips the ids newId makes, in 19 characters', () => {
    for (let i = 0; i < 1_000; i++) {
      const id = newId('key');
      const compact = compactKeyId(id);
      expect(compact).toMatch(/^[A-Za-z0-9_-]{19}$/);
      expect(keyIdFromCompact(compact)).toBe(id);
    }
  });

  it('round-trips the edges of the form: leading zeros, the largest time and sequence', () => {
    for (const id of [
      'key_00000000000000000000000',
      'key_zzzzzzzzzzzffffffffffff',
      'key_0000001a00z0123456789ab',
      'key_mik3k2lmzz0a1b2c3d4e5f6',
    ]) {
      expect(keyIdFromCompact(compactKeyId(id))).toBe(id);
    }
  });

  it('leaves any other id as it is', () => {
    for (const id of [
      'acc_mik3k2lm000a1b2c3d4e5f6',
      'key_MIK3K2LM000a1b2c3d4e5f6',
      'key_mik3k2lm000a1b2c3d4e5f',
      'key_mik3k2lm000a1b2c3d4e5f6a',
      'key_mik3k2lm000a1b2c3d4e5fg',
      'legacy-key',
    ]) {
      expect(compactKeyId(id)).toBe('');
    }
  });
});
