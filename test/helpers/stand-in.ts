/** The stand-in model server as `npm run mock-upstream` starts it (package.json sets MOCK_MAX_WORDS=12), as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Starts bench/mock-upstream.ts with `env`; `port` resolves with the port its ready line names. */
export function startStandIn(env: Record<string, string>): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/mock-upstream.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', MOCK_MAX_WORDS: '12', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (c: Buffer) => resolve(JSON.parse(c.toString()).port));
    child.once('exit', (code) => reject(new Error(`the stand-in exited with ${code}`)));
  });
  return { child, port };
}
