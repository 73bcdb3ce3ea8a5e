/**
 * A hosted MCP tool's `server_url`, checked before the request leaves: the upstream would call whatever it names, so
 * it must be an http(s) URL whose host the models file lists (`allowed_hosts`), and never a private, loopback or
 * link-local address (169.254.169.254 included) unless the operator said so (`allow_private_hosts`).
 */
import type { HostedTool } from '../catalog/hosted-tools';
import { apiError, type ApiError } from '../http/errors';
import { isPrivateHost } from './private-address';

export function mcpServerUrlRefusal(tool: unknown, allowed: HostedTool, param: string): ApiError | undefined {
  const raw = (tool as { server_url?: unknown }).server_url;
  if (raw === undefined) return undefined;
  const refuse = (why: string) => apiError('invalid_request_error', `server_url ${why}.`, param);
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    return refuse('must be an http:// or https:// URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse('must be an http:// or https:// URL');
  // Parsers disagree on `a@b@c`: whatever it hides, a server_url with userinfo is refused (headers carry credentials).
  if (url.username || url.password) return refuse('must not carry credentials (user:password@)');
  const host = url.hostname.toLowerCase();
  if (!allowed.allowedHosts?.has(host)) return refuse(`names a host this model does not allow (${host})`);
  if (!allowed.allowPrivateHosts && isPrivateHost(host)) return refuse(`names a private, loopback or link-local address (${host})`);
  return undefined;
}
