/**
 * tokenmeter exactly as `npm start` runs it (src/server.ts's start(): all metering, the request log and the metrics
 * on), plus one bench key with a huge token package; prints `{"ready":true,"port":…,"key":"sk-…"}` once listening, and
 * shuts down cleanly on SIGTERM/SIGINT (so --cpu-prof is written). BENCH_KEY_LIMITS (JSON, the admin API's `limits`)
 * gives the key rate and concurrency limits, set too high to refuse anything: what checking them costs.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateKey } from '../src/http/keys';
import { limitsSchema } from '../src/limits/limits';
import { start } from '../src/server';
import './gc-on-signal';
import { BENCH_MODEL, BENCH_UPSTREAM_MODEL } from './workload';

/** The bench key's package: more tokens than any run can spend. */
const TOKENS = 1e12;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-bench-'));
  const modelsFile = join(dir, 'models.yaml');
  writeFileSync(
    modelsFile,
    `models:\n  - id: ${BENCH_MODEL}\n    upstream_model: ${BENCH_UPSTREAM_MODEL}\n    context_length: 32768\n    max_output_tokens: 4096\n`,
  );
  const running = await start({
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    MODELS_FILE: modelsFile,
    JOURNAL_FILE: join(dir, 'journal'),
    SHUTDOWN_GRACE_SECONDS: '2',
  });
  const key = generateKey();
  const created = await running.store.createAccount({ email: null, name: 'bench', passwordHash: null, role: 'member', status: 'active' });
  if (created.kind !== 'created') throw new Error('an account without an email cannot clash');
  const limits = process.env.BENCH_KEY_LIMITS ? limitsSchema.parse(JSON.parse(process.env.BENCH_KEY_LIMITS)) : null;
  await running.store.createKey(created.account.id, {
    hash: key.hash,
    prefix: key.prefix,
    name: 'bench',
    expiresAt: null,
    models: null,
    limits,
  });
  await running.store.grantPackage(created.account.id, { tokens: TOKENS, expiresAt: null });
  const { port } = running.server.address() as AddressInfo;
  console.log(JSON.stringify({ ready: true, port, key: key.secret, store: running.store.kind }));

  const stop = () => running.shutdown().then(() => process.exit(0));
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err: Error) => {
  console.error(`tokenmeter-server: ${err.message}`);
  process.exit(1);
});
