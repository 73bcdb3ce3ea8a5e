/**
 * Addresses a hosted MCP server must not be: private, loopback, link-local (169.254.169.254, the cloud metadata
 * address, among them), unspecified and carrier-grade NAT, in IPv4 and IPv6 (BlockList matches an IPv4 address
 * mapped into IPv6 against the IPv4 rules), and `localhost` by name. The URL parser has already turned other spellings
 * of an IPv4 address (`2130706433`, `0x7f.1`) into dotted form.
 */
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** Whether `hostname` (as URL gives it: IPv6 in brackets) names a private, loopback or link-local address. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const family = isIP(host);
  if (family === 4) return blocked.check(host, 'ipv4');
  return family === 6 && blocked.check(host, 'ipv6');
}
