/**
 * A MONITOR connection for tests that watch what the proxy asks of Redis.
 *
 * ioredis can lose MONITOR's start to a race: when the `+OK` and the first monitored command arrive in one read, the
 * command is parsed before the connection has switched to monitoring (that switch waits for a microtask), finds no
 * command waiting for a reply and is reported as an `error` event ("Command queue state error"), the line lost. So a
 * start counts only once a marker command sent afterwards has been seen on the monitor with no error before it; a
 * start that fails or errs is retried on a fresh connection. Past that point the connection is monitoring, the race
 * cannot recur, and the error listener is removed: a later error fails the test that lost a line.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { eventually } from './eventually';

export async function startMonitor(url: string, attempts = 5): Promise<{ monitor: Redis; close: () => void }> {
  for (let i = 1; ; i++) {
    const base = new Redis(url);
    let monitor: Redis | undefined;
    try {
      monitor = await base.monitor();
      const marker = `monitor:warm:${randomBytes(6).toString('hex')}`;
      let seen = false;
      let failed: unknown;
      const onError = (err: unknown) => (failed ??= err);
      const onLine = (_time: string, args: string[]) => (seen ||= args.includes(marker));
      monitor.on('error', onError);
      monitor.on('monitor', onLine);
      await base.exists(marker);
      await eventually(
        async () => {
          if (failed) return;
          if (!seen) throw new Error('not yet seen');
        },
        5_000,
        'the monitor to see its warm-up marker',
      );
      monitor.off('monitor', onLine);
      monitor.off('error', onError);
      if (failed) throw failed;
      const started = monitor;
      return {
        monitor: started,
        close: () => {
          started.disconnect();
          base.disconnect();
        },
      };
    } catch (err) {
      monitor?.disconnect();
      base.disconnect();
      if (i >= attempts) throw err;
    }
  }
}
