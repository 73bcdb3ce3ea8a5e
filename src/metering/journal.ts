/**
 * The settlement journal: a local append-only file of settlements the store did not take, so usage charged while
 * Redis was away survives a proxy restart. Written only on failure (never on the hot path), fsynced, replayed at
 * start; the store's exactly-once marker makes a replay of an already-stored settlement harmless.
 */
import { closeSync, fdatasyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Settlement } from '../store/records/metering';

type Line = { t: 'settle'; s: Settlement } | { t: 'done'; id: string };

export class Journal {
  private fd: number;
  /** Settlements written and not yet confirmed by the store. */
  private readonly open = new Map<string, Settlement>();

  constructor(private readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
    for (const line of readLines(file)) {
      if (line.t === 'settle') this.open.set(line.s.requestId, line.s);
      else this.open.delete(line.id);
    }
    // Start a fresh file holding only what is still open, so the journal never grows past the backlog.
    this.fd = openSync(file, 'w');
    for (const s of this.open.values()) this.append({ t: 'settle', s });
  }

  /** Settlements an earlier run left unconfirmed. */
  unsettled(): Settlement[] {
    return [...this.open.values()];
  }

  /** Whether this settlement is already in the journal. */
  has(requestId: string): boolean {
    return this.open.has(requestId);
  }

  /** Records a settlement the store has not confirmed; durable when this returns. */
  record(s: Settlement): void {
    if (this.open.has(s.requestId)) return;
    this.open.set(s.requestId, s);
    this.append({ t: 'settle', s });
  }

  /** The store confirmed it: it need not be replayed. Truncates the file once nothing is open. */
  done(requestId: string): void {
    if (!this.open.delete(requestId)) return;
    if (this.open.size === 0) {
      closeSync(this.fd);
      this.fd = openSync(this.file, 'w');
      fdatasyncSync(this.fd);
      return;
    }
    this.append({ t: 'done', id: requestId });
  }

  close(): void {
    closeSync(this.fd);
  }

  private append(line: Line): void {
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fdatasyncSync(this.fd);
  }
}

function readLines(file: string): Line[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    if (raw.length === 0) continue;
    try {
      const line = JSON.parse(raw) as Line;
      // Written before accounts: the key's own account took the key's id when the store was migrated.
      if (line.t === 'settle' && line.s.accountId === undefined) line.s.accountId = line.s.keyId as string;
      lines.push(line);
    } catch {
      // A line cut short by a crash mid-write: it was never confirmed as written, so it is not a loss to skip.
    }
  }
  return lines;
}
