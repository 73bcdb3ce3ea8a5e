/**
 * A hosted MCP tool goes only where the models file allows: `allowed_hosts` is required to allow `mcp` at all, a
 * request's `server_url` on another host, or on a private, loopback or link-local address (the metadata address
 * 169.254.169.254 included), is a 400 naming the field, and nothing is forwarded or charged.
 */
import request from 'supertest';
import { buildCatalog } from '../../src/catalog/models';
import { proxyFixture } from '../helpers/fixture';
import { keyWithTokens } from '../helpers/stores';

const MCP_MODEL = 'acme/model-1';
const mcp = { per_call_tokens: 100, allowed_hosts: ['mcp.example.com', '169.254.169.254', 'LOCALHOST'] };

describe('MCP server_url', () => {
  const t = proxyFixture('redis', { models: [{}, { hosted_tools: { mcp } }] });
  const post = (secret: string, serverUrl: unknown) =>
    request(t.proxy.url)
      .post('/v1/responses')
      .set('authorization', `Bearer ${secret}`)
      .send({
        model: MCP_MODEL,
        input: 'hi',
        tools: [
          { type: 'function', name: 'f' },
          { type: 'mcp', server_label: 's', server_url: serverUrl },
        ],
      });

  it.each([
    ['http://169.254.169.254/latest/meta-data', 'private, loopback or link-local address (169.254.169.254)'],
    ['http://localhost:8080/sse', 'private, loopback or link-local address (localhost)'],
    ['https://evil.example.org/sse', 'names a host this model does not allow (evil.example.org)'],
    ['https://user@evil.example.org@mcp.example.com/', 'must not carry credentials'],
    ['file:///etc/passwd', 'must be an http:// or https:// URL'],
    [42, 'must be an http:// or https:// URL'],
  ])('refuses %j with a 400 naming tools[1].server_url, forwarding nothing', async (serverUrl, why) => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, serverUrl);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tools[1].server_url' });
    expect(res.body.error.message).toContain(why);
    expect(t.upstream.calls).toHaveLength(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0 });
  });

  it('forwards a server_url on an allowed public host', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, 'https://MCP.example.com/sse');
    expect(res.status).toBe(200);
    expect(t.upstream.calls).toHaveLength(1);
  });

  it('refuses a models file allowing mcp without allowed_hosts, in one line', () => {
    const models = [{ id: 'a/m', context_length: 100, max_output_tokens: 10, hosted_tools: { mcp: { per_call_tokens: 1 } } }];
    expect(() => buildCatalog({ models }, { upstreamUrl: 'http://up/v1', upstreamApiKey: undefined, env: {} })).toThrow(
      "models file: models[0].hosted_tools.mcp.allowed_hosts (a/m): is required: the hosts a request's server_url may name",
    );
  });
});
