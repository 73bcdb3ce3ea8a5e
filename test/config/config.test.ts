/** Configuration is parsed once; a bad value stops start-up with one line naming the variable. */
import { availableParallelism, hostname } from 'node:os';
import { loadConfig, ConfigError } from '../../src/config/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      workers: 1,
      host: '0.0.0.0',
      upstreamUrl: 'http://127.0.0.1:8000/v1',
      upstreamApiKey: undefined,
      redisUrl: undefined,
      adminToken: undefined,
      modelsFile: 'config/models.yaml',
      bodyLimit: 4 * 1024 * 1024,
      reservationLeaseSeconds: 60,
    });
  });

  it('parses sizes, URLs and numbers', () => {
    const c = loadConfig({
      PORT: '9000',
      BODY_LIMIT: '512kb',
      UPSTREAM_URL: 'https://api.example.com/v1/',
      REDIS_URL: 'redis://r:6379',
      RESERVATION_LEASE_SECONDS: '5',
    });
    expect(c).toMatchObject({
      port: 9000,
      bodyLimit: 512 * 1024,
      upstreamUrl: 'https://api.example.com/v1',
      redisUrl: 'redis://r:6379',
      reservationLeaseSeconds: 5,
    });
  });

  it('gives each host its own journal when JOURNAL_FILE names {hostname}', () => {
    expect(loadConfig({ JOURNAL_FILE: '/data/{hostname}.journal' }).journalFile).toBe(`/data/${hostname()}.journal`);
  });

  it('runs one worker per CPU with WORKERS=auto, and the number given otherwise', () => {
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(availableParallelism());
    expect(loadConfig({ WORKERS: '3' }).workers).toBe(3);
  });

  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['WORKERS', { WORKERS: '0' }],
    ['WORKERS', { WORKERS: 'many' }],
    ['PORT', { PORT: '70000' }],
    ['UPSTREAM_URL', { UPSTREAM_URL: 'ftp://x/v1' }],
    ['REDIS_URL', { REDIS_URL: 'localhost:6379' }],
    ['BODY_LIMIT', { BODY_LIMIT: 'lots' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'short' }],
    ['RESERVATION_LEASE_SECONDS', { RESERVATION_LEASE_SECONDS: '0' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
  ])('names %s when it is invalid, in one line', (name, env) => {
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toContain(name);
    expect(message).not.toContain('\n');
  });
});
