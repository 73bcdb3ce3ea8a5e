/**
 * A MONITOR connection for tests that watch what the proxy asks of Redis. ioredis can lose MONITOR's start to a
 * race when other clients of the shared test server send commands at that moment ("Command queue state error"), so
 * a failed start is retried on a fresh connection.
 */
import Redis from 'ioredis';

export async function startMonitor(url: string, attempts = 5): Promise<{ monitor: Redis; close: () => void }> {
  for (let i = 1; ; i++) {
    const base = new Redis(url);
    try {
      const monitor = await base.monitor();
      return {
        monitor,
        close: () => {
          monitor.disconnect();
          base.disconnect();
        },
      };
    } catch (err) {
      base.disconnect();
      if (i >= attempts) throw err;
    }
  }
}
