/** Reading a non-streamed upstream body: decompressed when the upstream ignored our identity request, and bounded. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** The body, decompressed when the upstream ignored our identity request; undefined for an encoding we cannot read. */
export function decoded(res: IncomingMessage): Readable | undefined {
  const enc = (res.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (enc === 'identity' || enc === '') return res;
  const decoder =
    enc === 'gzip' || enc === 'x-gzip'
      ? createGunzip()
      : enc === 'deflate'
        ? createInflate()
        : enc === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return undefined;
  res.once('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

/** Buffers a body up to `limit` bytes; calls back with undefined when it is larger. */
export function collect(
  body: Readable,
  limit: number,
  done: (buf: Buffer | undefined) => void,
  failed: (err: NodeJS.ErrnoException) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  body.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > limit) {
      over = true;
      done(undefined);
      return;
    }
    chunks.push(c);
  });
  body.once('end', () => {
    if (!over) done(Buffer.concat(chunks, size));
  });
  body.once('error', failed);
}

/** A body read whole: its bytes, or why not (larger than the limit, broken off, or the client left meanwhile). */
export type Whole = { kind: 'body'; buf: Buffer } | { kind: 'over' } | { kind: 'broken'; err: NodeJS.ErrnoException } | { kind: 'left' };

/** Reads a body whole within `limit`, unless the client's response closes first (it left: the read is abandoned). */
export function readWhole(body: Readable, limit: number, client: ServerResponse): Promise<Whole> {
  return new Promise((resolve) => {
    const onLeft = () => resolve({ kind: 'left' });
    client.once('close', onLeft);
    const settle = (whole: Whole) => {
      client.off('close', onLeft);
      resolve(whole);
    };
    collect(
      body,
      limit,
      (buf) => settle(buf === undefined ? { kind: 'over' } : { kind: 'body', buf }),
      (err) => settle({ kind: 'broken', err }),
    );
  });
}
