/** Password hashing: scrypt with a salt of its own per hash, verified in constant time, malformed hashes refused. */
import { hashPassword, passwordProblem, verifyPassword } from '../../src/accounts/password';

describe('password hashing', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$32768\$8\$3\$[\w-]+\$[\w-]{43}$/);
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterz', hash)).toBe(false);
  });

  it('salts each hash, so equal passwords do not show as equal hashes (stops precomputed-table and reuse spotting)', async () => {
    expect(await hashPassword('the same password')).not.toBe(await hashPassword('the same password'));
  });

  it.each([
    ['empty', ''],
    ['another scheme', 'bcrypt$2b$10$abc'],
    ['a cost too high to compute (a stored hash cannot be made into a CPU bomb)', 'scrypt$1073741824$8$1$c2FsdA$' + 'A'.repeat(43)],
    ['a truncated key', 'scrypt$32768$8$3$c2FsdA$short'],
  ])('answers false, never throws, for a malformed hash: %s', async (_what, stored) => {
    await expect(verifyPassword('whatever password', stored)).resolves.toBe(false);
  });

  it('asks for at least 10 characters and at most 1024', () => {
    expect(passwordProblem('123456789')).toMatch(/at least 10/);
    expect(passwordProblem('1234567890')).toBeUndefined();
    expect(passwordProblem('x'.repeat(1025))).toMatch(/at most 1024/);
  });
});
