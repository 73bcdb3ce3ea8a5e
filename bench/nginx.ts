/** nginx as a reference reverse proxy: a minimal config in a temp dir (keep-alive upstream, no buffering), when installed. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartOptions } from './processes';

/** nginx's version line, or undefined when it is not installed. */
export function nginxVersion(): string | undefined {
  const r = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  return /nginx\/(\S+)/.exec(`${r.stdout}${r.stderr}`)?.[1] ?? 'unknown';
}

/** Writes the config and returns how to start nginx on `port` in front of `upstreamPort`, and how to clean up after it. */
export function nginxTarget(port: number, upstreamPort: number): { options: Omit<StartOptions, 'core'>; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tokenmeter-bench-nginx-'));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream mock {
    server 127.0.0.1:${upstreamPort};
    keepalive 256;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 1000000;
    keepalive_timeout 65s;
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`,
  );
  return {
    options: { name: 'nginx', command: 'nginx', args: ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf], port },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
