/**
 * Starts a real three-master Redis Cluster on loopback (redis-server cluster mode + redis-cli --cluster create). Each
 * node's cluster bus port is claimed too (it would be port + 10000, which nobody claimed).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { claimPort } from './ports';
import { startRedisServer, type RedisServer } from './redis-server';

const run = promisify(execFile);

export interface RedisCluster {
  /** One node's URL: a seed for REDIS_CLUSTER=true. */
  url: string;
  nodes: RedisServer[];
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-cluster-'));
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      const bus = await claimPort();
      const args = ['--cluster-enabled', 'yes', '--cluster-port', String(bus), '--cluster-config-file', join(dir, `nodes-${i}.conf`)];
      nodes.push(await startRedisServer([...args, '--dir', dir]));
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (const n of nodes) await clusterOk(n.url);
  } catch (err) {
    for (const n of nodes) await n.stop();
    throw err;
  }
  return { url: nodes[0].url, nodes, stop: async () => void (await Promise.all(nodes.map((n) => n.stop()))) };
}

async function clusterOk(url: string): Promise<void> {
  const client = new Redis(url);
  try {
    for (let i = 0; i < 200; i++) {
      const info = (await client.call('CLUSTER', 'INFO')) as string;
      if (info.includes('cluster_state:ok')) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`cluster at ${url} did not reach cluster_state:ok`);
  } finally {
    client.disconnect();
  }
}
