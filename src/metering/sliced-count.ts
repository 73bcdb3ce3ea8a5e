/**
 * A count the worker could not make (busy, over its budget, closed at shutdown), made on the main thread a slice at a
 * time: small pieces, and a turn of the event loop whenever a slice has run a few milliseconds, so no request waits on
 * it. The answer is charged what our tokenizer counts, never a byte count in its place.
 */
import { countText } from './estimate';
import { piecesOf } from './token-pieces';

/** The longest the event loop is held by one slice. */
const SLICE_MS = 3;
/** Characters per piece: a piece well inside a slice on a loaded core. */
const SLICE_PIECE = 512;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Each text's count, as `countText` makes it, without holding the loop past a slice. */
export async function countInSlices(texts: readonly string[]): Promise<number[]> {
  const counts: number[] = [];
  let until = performance.now() + SLICE_MS;
  for (const text of texts) {
    let n = 0;
    for (const piece of piecesOf(text, SLICE_PIECE)) {
      if (performance.now() > until) {
        await nextTurn();
        until = performance.now() + SLICE_MS;
      }
      n += countText(piece);
    }
    counts.push(n);
  }
  return counts;
}
