/** The floor of tokenmeter's stack: bare Express 5 + http-proxy-middleware 3 forwarding everything, nothing else. */
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { Agent } from 'node:http';
import './gc-on-signal';
import { serveLoopStats } from './loop-stats';

const target = process.env.UPSTREAM_ORIGIN;
if (!target) throw new Error('UPSTREAM_ORIGIN is required');

const app = express();
app.use(createProxyMiddleware({ target, changeOrigin: true, agent: new Agent({ keepAlive: true }) }));
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  void serveLoopStats().then((statsPort) =>
    console.log(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0, statsPort })),
  );
});
server.keepAliveTimeout = 65_000;
// Exit normally on SIGTERM, so a --cpu-prof profile gets written.
process.once('SIGTERM', () => process.exit(0));
