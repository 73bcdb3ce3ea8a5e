/** An upstream body read through a translator: backpressure passes through the pipe, and so does a failure. */
import type { Readable, Transform } from 'node:stream';

export function translated(body: Readable, translator: Transform): Readable {
  body.once('error', (err) => translator.destroy(err));
  return body.pipe(translator);
}
