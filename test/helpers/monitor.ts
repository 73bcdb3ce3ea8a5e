/**
 * A MONITOR connection for tests that watch what the proxy asks of Redis, read in windows: `during(act)` returns every
 * command Redis ran while `act` did (MONITOR is ordered: a marker command sent after `act` closes the window).
 *
 * ioredis can lose a monitored line to a race: when MONITOR's `+OK` and the first monitored command arrive in one
 * read, the command is parsed before the connection has switched to monitoring (that switch waits for a microtask),
 * finds no command waiting for a reply and is reported as an `error` event ("Command queue state error"), the line
 * lost. It happens at the start and again after any reconnection (ioredis sends MONITOR again). So the connection's
 * errors, closes and reconnections are listened to for its whole life and mark the window they fall in as torn: a
 * torn window is measured again on a fresh connection (its `act` runs again, so it must be repeatable). A window
 * that was not torn saw every line; a test can never pass on a window that lost one.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { eventually } from './eventually';

/** A command Redis ran: its arguments, and whether a script ran it. */
export interface MonitoredCommand {
  args: string[];
  lua: boolean;
}

export interface Monitor {
  /** Every command Redis ran (from any client) while `act` ran; `act` runs again if the window was torn. */
  during(act: () => Promise<unknown>): Promise<MonitoredCommand[]>;
  close(): void;
}

const ATTEMPTS = 5;

/** One MONITOR connection and what it has seen and not yet handed out; `torn` once it erred or closed. */
class Watch {
  private lines: MonitoredCommand[] = [];
  torn = false;
  private constructor(private readonly monitor: Redis) {
    monitor.on('monitor', (_time: string, args: string[], source: string) => this.lines.push({ args, lua: source === 'lua' }));
    for (const event of ['error', 'close', 'end']) monitor.on(event, () => (this.torn = true));
  }

  /** A MONITOR connection on `url` whose start was seen to work (its marker arrived with no error on the way). */
  static async open(url: string, name: string, base: Redis): Promise<Watch> {
    // A torn connection is replaced, never reconnected: a reconnection would run the start's race again, unseen.
    const watch = new Watch(new Redis(url, { monitor: true, connectionName: name, retryStrategy: () => null }));
    try {
      await new Promise((resolve, reject) => {
        watch.monitor.once('monitoring', resolve);
        watch.monitor.once('error', reject);
        watch.monitor.once('end', () => reject(new Error('the monitor connection ended')));
      });
      await watch.sync(base);
      return watch;
    } catch (err) {
      watch.close();
      throw err;
    }
  }

  /**
   * Waits until every command Redis ran before now has been seen, and returns those not yet taken (what runs after
   * stays for the next call); undefined if the connection was torn meanwhile.
   */
  async sync(base: Redis): Promise<MonitoredCommand[] | undefined> {
    const marker = `monitor:sync:${randomBytes(6).toString('hex')}`;
    const at = () => this.lines.findIndex((c) => c.args.includes(marker));
    await base.exists(marker);
    await eventually(
      async () => {
        if (!this.torn && at() < 0) throw new Error('not yet seen');
      },
      5_000,
      'the monitor to see its marker',
    );
    if (this.torn) return undefined;
    const before = this.lines.slice(0, at());
    this.lines = this.lines.slice(at() + 1);
    return before;
  }

  close(): void {
    if (this.monitor.status !== 'end') this.monitor.disconnect();
  }
}

/** Opens a monitor on `url` (its MONITOR connections named `name`); a start that erred is tried again. */
export async function startMonitor(url: string, name = `monitor-${randomBytes(4).toString('hex')}`): Promise<Monitor> {
  const base = new Redis(url);
  let watch: Watch | undefined;

  async function fresh(): Promise<Watch> {
    for (let i = 1; ; i++) {
      const next = await Watch.open(url, name, base).catch((err: unknown) => (i >= ATTEMPTS ? Promise.reject(err) : undefined));
      if (next && !next.torn) return next;
      next?.close();
    }
  }

  return {
    async during(act) {
      for (let i = 1; ; i++) {
        if (!watch || watch.torn) {
          watch?.close();
          watch = await fresh();
        }
        const current = watch;
        // What ran before the window (a previous act's tail) is seen, then dropped.
        if (await current.sync(base)) {
          await act();
          const seen = await current.sync(base);
          if (seen) return seen;
        }
        if (i >= ATTEMPTS) throw new Error(`the monitor's connection was torn in ${ATTEMPTS} windows in a row`);
      }
    },
    close() {
      watch?.close();
      base.disconnect();
    },
  };
}
