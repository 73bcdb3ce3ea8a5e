/**
 * Counting in linear time: text cut into pieces before BPE. BPE's cost grows with the square of a pre-token's length,
 * and a run of one letter (or of spaces, or of punctuation) is one o200k pre-token however long it is: 160k of `a` took
 * 13 s uncut. Cut where o200k's pre-tokenizer already splits, a piece counts exactly as it would inside the whole text.
 */

/** A piece ends at the first word boundary past this many characters (so a count can stop between pieces). */
export const PIECE_TARGET = 4096;
/** A stretch with no word boundary is cut every this many characters (o200k's longest token is 128 bytes). */
export const HARD_CUT = 256;

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const WHITESPACE = /\s/;

/**
 * Whether o200k's pre-tokenizer always splits before `text[i]`, a space, tab or line break: the character before it
 * is not whitespace (a run of whitespace is one pre-token), and before a line break it is a letter or digit
 * (punctuation takes the line breaks after it into its own pre-token: ` ?[^\s\p{L}\p{N}]+[\r\n/]*`).
 */
function splitsBefore(text: string, i: number, c: number): boolean {
  const p = text.charCodeAt(i - 1);
  if (c === LF || c === CR) {
    if (p < 128) return (p >= 48 && p <= 57) || ((p | 32) >= 97 && (p | 32) <= 122);
    return LETTER_OR_DIGIT.test(text[i - 1]);
  }
  if (p < 128) return !(p === SPACE || (p >= TAB && p <= CR));
  return !WHITESPACE.test(text[i - 1]);
}

/** A hard cut at `i`, moved back one so it never falls inside a surrogate pair. */
function hardCut(text: string, i: number): number {
  const c = text.charCodeAt(i);
  const p = text.charCodeAt(i - 1);
  return c >= 0xdc00 && c <= 0xdfff && p >= 0xd800 && p <= 0xdbff ? i - 1 : i;
}

/**
 * The sum of `count` over the pieces of `text`: cut at word boundaries (see splitsBefore) once a piece reaches
 * PIECE_TARGET, and hard every HARD_CUT characters of a stretch without one. Ordinary text counts exactly as whole;
 * only a stretch longer than HARD_CUT with no boundary (a run, a long blob) may count a token or so more per cut.
 */
export function countInPieces(text: string, count: (piece: string) => number): number {
  if (text.length <= HARD_CUT) return count(text);
  let total = 0;
  for (const piece of piecesOf(text, PIECE_TARGET)) total += count(piece);
  return total;
}

/** The pieces of `text` countInPieces counts, each ending at the first word boundary past `target` characters. */
export function* piecesOf(text: string, target: number): Generator<string> {
  let start = 0;
  let stretch = 0;
  for (let i = 1; i < text.length; i++) {
    if (i - stretch >= HARD_CUT) {
      const cut = hardCut(text, i);
      yield text.slice(start, cut);
      start = stretch = cut;
      continue;
    }
    const c = text.charCodeAt(i);
    if ((c === SPACE || c === TAB || c === LF || c === CR) && splitsBefore(text, i, c)) {
      stretch = i;
      if (i - start >= target) {
        yield text.slice(start, i);
        start = i;
      }
    }
  }
  yield text.slice(start);
}
