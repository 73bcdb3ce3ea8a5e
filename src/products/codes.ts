/**
 * Redemption codes: made from 120 random bits in Crockford's base32 (no I, L, O or U to misread), typed back in any
 * case with or without dashes, and stored only as the SHA-256 of their normalised form.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export interface NewCodeSecret {
  /** Shown to the operator once, never stored. */
  code: string;
  hash: string;
}

/** `TM-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`. */
export function generateCode(): NewCodeSecret {
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  const code = `TM-${out.match(/.{4}/g)!.join('-')}`;
  return { code, hash: hashCode(code) };
}

/** Upper case, without spaces or dashes, with the letters people mistake for digits read as those digits. */
export function normaliseCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

export function hashCode(code: string): string {
  return createHash('sha256').update(normaliseCode(code)).digest('hex');
}
