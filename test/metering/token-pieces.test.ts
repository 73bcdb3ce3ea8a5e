/** Counting in pieces: ordinary text counts exactly as gpt-tokenizer counts it whole, and no run makes BPE quadratic. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countText } from '../../src/metering/estimate';
import { countInPieces, HARD_CUT, PIECE_TARGET } from '../../src/metering/token-pieces';

const AS_TEXT = { disallowedSpecial: new Set<string>() };
const whole = (text: string) => countTokens(text, AS_TEXT);

const words = [
  'hello',
  'World',
  "don't",
  "IT'S",
  '42',
  '3.14159',
  '1234567',
  '日本語の文',
  'émigré',
  'naïve',
  'Ωμέγα',
  '🙂👍🏽',
  '𝐀𝐁',
  'e\u0301',
  '<|endoftext|>',
  'x=y+1;',
  '/usr/bin',
  'https://example.com/a?b=c',
  '---',
  '...',
  '"quoted"',
  '(x)',
  'camelCaseName',
  'snake_case',
  '{"k":[1,2]}',
  '#!',
  '\u00a0nbsp',
  'tab\tin',
];
const separators = [
  ' ',
  ' ',
  ' ',
  ', ',
  '. ',
  ' \n',
  '\n',
  '.\n',
  '\n\n',
  '\r\n',
  '\t',
  '  ',
  '   ',
  ': ',
  '" ',
  ' (',
  '',
  '!\n/',
  '\n  ',
  ' \t ',
];
const ordinary = fc
  .array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...separators)), { minLength: 600, maxLength: 3000 })
  .map((parts) => parts.map(([w, s]) => w + s).join(''));

/** A text in which some stretch longer than HARD_CUT has no space, tab, or line break after a letter or digit. */
function hasLongStretch(text: string): boolean {
  return new RegExp(`(?:[^ \\t\\r\\n]|(?<![\\p{L}\\p{N}])[\\r\\n]|(?<=\\s)[ \\t]){${HARD_CUT},}`, 'u').test(text);
}

describe('counting in pieces', () => {
  it('counts ordinary text exactly as the tokenizer counts it whole', () => {
    fc.assert(
      fc.property(ordinary, (text) => {
        fc.pre(!hasLongStretch(text));
        expect(text.length).toBeGreaterThan(PIECE_TARGET);
        expect(countText(text)).toBe(whole(text));
      }),
      { numRuns: 60 },
    );
  });

  it('counts this repository’s manual and source exactly as whole, and its pages with tables of long dash runs within 0.1%', () => {
    const root = join(__dirname, '../..');
    const files = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
      ...readdirSync(join(root, 'src/proxy'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `src/proxy/${f}`),
    ];
    const texts = files.map((file) => readFileSync(join(root, file), 'utf8'));
    const plain = texts.filter((text) => !hasLongStretch(text));
    const stretched = texts.filter(hasLongStretch);
    expect(plain.length).toBeGreaterThan(10);
    expect(stretched.length).toBeGreaterThan(0);
    for (const text of plain) expect(countText(text)).toBe(whole(text));
    for (const text of stretched) expect(Math.abs(countText(text) - whole(text))).toBeLessThanOrEqual(whole(text) / 1000);
  });

  it('cuts a stretch without boundaries every HARD_CUT characters, never inside a surrogate pair', () => {
    const pieces: string[] = [];
    const text = 'a' + '😀'.repeat(HARD_CUT);
    countInPieces(text, (piece) => pieces.push(piece));
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(HARD_CUT);
      expect(piece).toBe(Buffer.from(piece, 'utf8').toString('utf8'));
    }
  });

  // The attack: a long run of one character is one pre-token, and BPE on it took quadratic time (160k: 13 s).
  it('keeps runs of one letter, of spaces and of punctuation to pieces no longer than HARD_CUT', () => {
    for (const unit of ['q', ' ', '!', '\n', '語', '😀']) {
      const text = unit.repeat(40_000);
      let longest = 0;
      const tokens = countInPieces(text, (piece) => {
        longest = Math.max(longest, piece.length);
        return whole(piece);
      });
      expect(longest).toBeLessThanOrEqual(HARD_CUT);
      expect(tokens).toBeGreaterThan(0);
    }
  });
});
