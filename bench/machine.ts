/** The facts a result is meaningless without: the machine it ran on and the version of everything measured. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  os: string;
}

export function machine(): Machine {
  const osRelease = readOr('/etc/os-release', '');
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: release(),
    os: /^PRETTY_NAME="?([^"\n]*)"?/m.exec(osRelease)?.[1] ?? 'unknown',
  };
}

export function versions(nginx: string | undefined): Record<string, string> {
  const redis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return {
    node: process.versions.node,
    tokenmeter: `${packageVersion('.')} (${git()})`,
    express: packageVersion('node_modules/express'),
    'http-proxy-middleware': packageVersion('node_modules/http-proxy-middleware'),
    'redis-server': /v=(\S+)/.exec(redis.stdout ?? '')?.[1] ?? 'not installed',
    nginx: nginx ?? 'not installed',
  };
}

function packageVersion(dir: string): string {
  return (JSON.parse(readOr(join(ROOT, dir, 'package.json'), '{}')) as { version?: string }).version ?? 'unknown';
}

/** The commit measured, marked dirty when src/ has uncommitted changes. */
export function git(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  if (!head) return 'no git';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  return dirty ? `${head}, src modified` : head;
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
