/** Passive ejection: a run of failures ejects, a success ends the run, the n-th ejection in a row lasts n times the first. */
import { OutlierDetector } from '../../src/upstreams/outlier-detector';
import { PoolMetrics } from '../../src/upstreams/pool-metrics';
import { UpstreamServer } from '../../src/upstreams/server';
import { createLogger } from '../../src/observability/logger';
import { Registry } from 'prom-client';
import { Writable } from 'node:stream';

const spec = { consecutiveFailures: 3, windowMs: 10_000, baseEjectionMs: 1_000, maxEjectionMs: 2_500, maxEjectionPercent: 50 };
const quiet = createLogger('error', new Writable({ write: (_c, _e, cb) => cb() }));

describe('the outlier detector', () => {
  const servers = ['http://a:1/v1', 'http://b:1/v1', 'http://c:1/v1', 'http://d:1/v1'].map(
    (url) => new UpstreamServer(url, { url, label: url, weight: 1, maxConcurrent: undefined }, 1),
  );
  const detector = new OutlierDetector('p', spec, () => servers, quiet, new PoolMetrics(new Registry()));
  afterAll(() => {
    detector.stop();
    for (const s of servers) s.close();
  });
  const [a, b, c] = servers;
  const T = 1_000_000;

  it('ejects after the run of failures, not before, and ends a run at a success or past its window', () => {
    detector.failed(a, T);
    detector.failed(a, T + 1);
    detector.succeeded(a);
    detector.failed(a, T + 2);
    detector.failed(a, T + 3);
    expect(a.ejected(T + 3)).toBe(false);
    // The third failure comes after the window of the run's first: a new run begins.
    detector.failed(a, T + 20_000);
    expect(a.ejected(T + 20_000)).toBe(false);
    detector.failed(a, T + 20_001);
    detector.failed(a, T + 20_002);
    expect(a.ejectedUntil).toBe(T + 20_002 + 1_000);
  });

  it('lengthens each ejection in a row by the base, up to the maximum, and never ejects more than half the pool', () => {
    let back = a.ejectedUntil;
    for (let i = 0; i < 3; i++) detector.failed(a, back + i);
    expect(a.ejectedUntil).toBe(back + 2 + 2_000);
    back = a.ejectedUntil;
    for (let i = 0; i < 3; i++) detector.failed(a, back + i);
    expect(a.ejectedUntil).toBe(back + 2 + 2_500);
    for (let i = 0; i < 3; i++) detector.failed(b, back + i);
    expect(b.ejected(back + 3)).toBe(true);
    // a and b are out at back + 3 (two of four): c may not be ejected too.
    for (let i = 0; i < 3; i++) detector.failed(c, back + 3 + i);
    expect(c.ejected(back + 6)).toBe(false);
  });
});
