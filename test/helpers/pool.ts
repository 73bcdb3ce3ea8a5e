/** Pools of real test upstreams, and the check every pool test ends with: the ledger is what the servers reported. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { defaultReply, PROMPT_TOKENS, startUpstream, type Behaviour, type TestUpstream } from './upstream';
import type { UsageLedger } from '../../src/store/ports/usage-ledger';

/** What a server reported for one request it answered in full: its id (our x-request-id) and its usage. */
export interface Reported {
  requestId: string;
  server: string;
  promptTokens: number;
  completionTokens: number;
}

/** Answers as the suite's test upstream does (5 words, prompt PROMPT_TOKENS), and notes what it reported. */
export function reporting(reported: Reported[], server: () => string, delayMs = 0): Behaviour {
  return async (call, req, res) => {
    // Health checks (GET) are answered, not counted: they report no usage.
    if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    if (call.aborted) return;
    const limit = call.body.max_tokens ?? call.body.max_completion_tokens ?? 5;
    res.once('finish', () =>
      reported.push({
        requestId: String(call.headers['x-request-id']),
        server: server(),
        promptTokens: PROMPT_TOKENS,
        completionTokens: Math.min(5, limit),
      }),
    );
    await defaultReply(call, req, res);
  };
}

/** `n` test upstreams that report what they answer into `reported`. */
export async function startServers(n: number, reported: Reported[]): Promise<TestUpstream[]> {
  const servers: TestUpstream[] = [];
  for (let i = 0; i < n; i++) {
    const s = await startUpstream();
    s.behave(reporting(reported, () => s.url));
    servers.push(s);
  }
  return servers;
}

/** The ledger of `keyId` against what the servers reported: one record per client request, each the reported usage. */
export async function expectLedgerMatches(ledger: UsageLedger, keyId: string, reported: Reported[], clientRequests: number): Promise<void> {
  const records = await ledger.usage({ keyId, limit: 10_000 });
  expect(records).toHaveLength(clientRequests);
  const byId = new Map(reported.map((r) => [r.requestId, r]));
  expect(byId.size).toBe(reported.length);
  for (const record of records) {
    const r = byId.get(record.requestId);
    expect(r).toBeDefined();
    expect({ prompt: record.promptTokens, completion: record.completionTokens, estimated: record.estimated }).toEqual({
      prompt: r?.promptTokens,
      completion: r?.completionTokens,
      estimated: false,
    });
  }
}

/** A replica in its own process (test/helpers/replica-process.cjs), to be killed and started again on its port. */
export interface Replica {
  url: string;
  port: number;
  kill(): Promise<void>;
}

export async function startReplica(port = 0, delayMs = 50): Promise<Replica> {
  const child = spawn(process.execPath, [join(__dirname, 'replica-process.cjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), REPLICA_DELAY_MS: String(delayMs) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bound = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${bound}/v1`,
    port: bound,
    kill: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
