/**
 * `npx tsx bench/upstream-leg.ts`: what the forward step's HTTP client costs, alone: today's `node:http` keep-alive
 * agent (as src/upstreams/server.ts builds it, and attempt.ts sends) against undici's `Pool`, each sending the bench's
 * chat request to the mock upstream and reading the whole answer (JSON, then a 50-event stream), at 16 requests in
 * flight, in interleaved windows. The figure is this process's CPU per request (the client's side of the leg), as a
 * ratio between the two clients in the same round (which cancels the machine's slow drifts).
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { canPin, killAllOnExit, pinSelf, startProcess } from './processes';
import { spread } from './report';
import { compileServers, serverProcess } from './servers';
import { jsonBody, streamBody } from './workload';

const ROUNDS = Number(process.env.LEG_ROUNDS ?? 8);
const WINDOW_MS = Number(process.env.LEG_WINDOW_MS ?? 1_500);
const IN_FLIGHT = 16;
const PATH = '/v1/chat/completions';
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer upstream-key' };

type Send = (body: Buffer) => Promise<number>;

function nodeHttp(port: number): Send {
  const agent = new Agent({ keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' });
  return (body) =>
    new Promise((resolve, reject) => {
      const req = request(
        { hostname: '127.0.0.1', port, path: PATH, method: 'POST', agent, headers: { ...HEADERS, 'content-length': body.length } },
        (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => (n += c.length));
          res.once('end', () => resolve(n));
          res.once('error', reject);
        },
      );
      req.once('error', reject);
      req.end(body);
    });
}

function undiciPool(port: number): Send {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 256, pipelining: 1 });
  return async (body) => {
    const res = await pool.request({ path: PATH, method: 'POST', headers: { ...HEADERS, 'content-length': String(body.length) }, body });
    let n = 0;
    for await (const c of res.body) n += (c as Buffer).length;
    return n;
  };
}

async function window(send: Send, body: Buffer): Promise<number> {
  const end = performance.now() + WINDOW_MS;
  let done = 0;
  const cpu0 = process.cpuUsage();
  const loop = async () => {
    while (performance.now() < end) {
      await send(body);
      done++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / done;
}

async function main(): Promise<void> {
  if (canPin) pinSelf(0);
  compileServers();
  const upstream = await startProcess({ ...serverProcess('mock upstream', 'mock-upstream', {}), core: canPin ? 1 : undefined });
  const port = Number(upstream.ready.port);
  const clients: [string, Send][] = [
    ['node:http Agent', nodeHttp(port)],
    ['undici Pool', undiciPool(port)],
  ];
  for (const [, send] of clients) for (const body of [jsonBody, streamBody]) for (let i = 0; i < 2_000; i++) await send(body);
  const out: string[] = [];
  for (const [kind, body] of [
    ['JSON', jsonBody],
    ['stream', streamBody],
  ] as const) {
    const cpu: number[][] = clients.map(() => []);
    for (let round = 0; round < ROUNDS; round++)
      for (let k = 0; k < clients.length; k++) {
        const i = (k + round) % clients.length;
        cpu[i][round] = await window(clients[i][1], body);
      }
    for (const [i, [label]] of clients.entries()) {
      const s = spread(cpu[i]);
      const r = spread(cpu[i].map((c, round) => c / cpu[0][round]));
      out.push(
        `| ${kind} | ${label} | ${s.median.toFixed(0)} [${s.min.toFixed(0)}–${s.max.toFixed(0)}] | ${r.median.toFixed(3)} [${r.min.toFixed(3)}–${r.max.toFixed(3)}]× |`,
      );
    }
  }
  await upstream.stop();
  process.stdout.write(
    `\n${ROUNDS} rounds of ${WINDOW_MS} ms at ${IN_FLIGHT} in flight\n\n| load | client | CPU µs per request, median [least–most] | ÷ node:http, same round |\n|:--|:--|--:|--:|\n${out.join('\n')}\n`,
  );
  process.exit(0);
}

killAllOnExit((line) => process.stderr.write(`upstream-leg: ${line}\n`));
main().catch((err: Error) => {
  process.stderr.write(`upstream-leg: failed: ${err.message}\n`);
  process.exit(1);
});
