/**
 * On Redis Cluster, an endpoint's creation is answered once every listening process has applied it: PUBLISH there
 * counts only the subscribers of the node that ran it, while each process's subscriber sits on a node of its own
 * client's choosing, so the wait asks every node how many listen.
 */
import { Cluster } from 'ioredis';
import { RedisWebhookStore } from '../../src/store/redis/redis-webhook-store';
import { eventually } from '../helpers/eventually';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('endpoint changes on Redis Cluster', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 30_000);
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await cluster.stop();
  });

  it('waits for the processes listening on every node, each applying the change slowly', async () => {
    const client = () => {
      const c = new Cluster([cluster.url]);
      clients.push(c);
      return c;
    };
    const creator = new RedisWebhookStore(client(), { prefix: 'wc:' });
    // Six processes: their subscribers spread over the three nodes. Each takes 300 ms to apply a change.
    const applied: number[] = [];
    const stops = Array.from({ length: 6 }, (_, i) =>
      new RedisWebhookStore(client(), { prefix: 'wc:' }).watchEndpoints(async () => {
        await pause(300);
        applied.push(i);
      }),
    );
    try {
      // Each applies once when subscribed: waited for, so no start-up apply is counted as a change's below.
      await eventually(async () => expect(new Set(applied).size).toBe(6), 20_000, 'all six processes subscribed and applied once');
      // Three changes: each publication runs on a node the cluster client picks, not always the subscribers'.
      for (const id of ['we_c1', 'we_c2', 'we_c3']) {
        applied.length = 0;
        await creator.createEndpoint({ id, url: 'http://127.0.0.1:9/', types: ['key.created'], secret: 'whsec_c', created: 1 });
        // What must hold in every schedule: each process had applied it before the creation was answered. (A process
        // may apply more than once: a subscriber that reconnects re-applies, as a change may have been missed.)
        expect([...new Set(applied)].sort()).toEqual([0, 1, 2, 3, 4, 5]);
      }
    } finally {
      for (const stop of stops) await stop();
    }
  }, 30_000);
});
