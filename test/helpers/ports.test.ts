/** The test servers' claimed ports (ports.ts): outside the kernel's ephemeral range, one holder each, stale claims taken over. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimablePorts, claimPort, releasePort } from './ports';

const claimFile = (port: number) => join(tmpdir(), 'tokenmeter-ports', String(port));

describe('claimed ports', () => {
  it('come from outside the ephemeral range, each claimed once, under this process id, until released', async () => {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => claimPort()));
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) {
      expect(port < low || port > high).toBe(true);
      expect(readFileSync(claimFile(port), 'utf8')).toBe(String(process.pid));
      releasePort(port);
      expect(existsSync(claimFile(port))).toBe(false);
    }
  });

  it('lies below the range when there is room, else above it', () => {
    const file = join(tmpdir(), `range-${process.pid}`);
    writeFileSync(file, '32768\t60999\n');
    expect(claimablePorts(file)).toEqual({ from: 10_000, to: 32_767 });
    writeFileSync(file, '1024\t60999\n');
    expect(claimablePorts(file)).toEqual({ from: 61_000, to: 65_535 });
  });
});
