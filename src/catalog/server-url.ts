/**
 * An upstream server's URL as the catalog keeps it: normalised (scheme and host lower case, no default port, no
 * trailing slash), so `http://h:80/v1` and `http://h/v1` are one server; refused with credentials (user:password@ is
 * never sent, so it would only be published); its query kept for every call. Shown only by its redacted label.
 */

export interface ServerUrl {
  /** scheme://host[:port]/path[?query]: what is called, and the server's identity within its pool. */
  url: string;
  /** scheme://host:port: what /metrics, /admin/upstreams, the console and the logs show (never path, query or userinfo). */
  label: string;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

/** The URL normalised and its label, or why it cannot be a server's (one line, `where` naming it). */
export function serverUrl(raw: string, where: string): ServerUrl | string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `${where} must be a URL`;
  }
  if (u.username || u.password)
    return `${where} carries credentials (user:password@): they are never sent; give the key in the upstream's api_key_env`;
  if (u.hash) return `${where} has a #fragment, which no server receives`;
  const port = u.port || DEFAULT_PORTS[u.protocol];
  return { url: `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}${u.search}`, label: `${u.protocol}//${u.hostname}:${port}` };
}
