/** A small client for the admin API, used by the CLI: one method per route, failures as readable messages. */
import type {
  AccountObject,
  AccountPageObject,
  AccountShowObject,
  CodeObject,
  CreateAccountRequest,
  CreateCodesRequest,
  CreatedAccountObject,
  CreatedKeyObject,
  CreateKeyRequest,
  CreateProductRequest,
  GeneratedCodeObject,
  GrantRequest,
  KeyDetailObject,
  KeyObject,
  LedgerStatusObject,
  ListObject,
  ModelsReloadedObject,
  UpstreamPoolList,
  PackageObject,
  PatchKeyRequest,
  PatchProductRequest,
  ProductObject,
  RevokedKeyObject,
  UpdateAccountRequest,
  UsageObject,
} from '../api';

import type { DeliveryObject, NewWebhookEndpointObject, WebhookEndpointDetailObject, WebhookEndpointObject } from '../api/webhook';
type Query = Record<string, string | number | undefined>;

/** A failure to show the operator as it is: what happened and what to do. */
export class AdminClientError extends Error {
  override name = 'AdminClientError';
}

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  createAccount(body: CreateAccountRequest): Promise<CreatedAccountObject> {
    return this.call('POST', '/admin/accounts', body);
  }
  listAccounts(query: Query): Promise<AccountPageObject> {
    return this.call('GET', `/admin/accounts${queryString(query)}`);
  }
  showAccount(id: string): Promise<AccountShowObject> {
    return this.call('GET', `/admin/accounts/${encodeURIComponent(id)}`);
  }
  updateAccount(id: string, body: UpdateAccountRequest): Promise<AccountObject> {
    return this.call('PATCH', `/admin/accounts/${encodeURIComponent(id)}`, body);
  }
  grantAccountPackage(id: string, body: GrantRequest): Promise<PackageObject> {
    return this.call('POST', `/admin/accounts/${encodeURIComponent(id)}/packages`, body);
  }
  accountKeys(id: string): Promise<ListObject<KeyObject>> {
    return this.call('GET', `/admin/accounts/${encodeURIComponent(id)}/keys`);
  }
  createKey(body: CreateKeyRequest): Promise<CreatedKeyObject> {
    return this.call('POST', '/admin/keys', body);
  }
  listKeys(): Promise<ListObject<KeyObject>> {
    return this.call('GET', '/admin/keys');
  }
  showKey(id: string): Promise<KeyDetailObject> {
    return this.call('GET', `/admin/keys/${encodeURIComponent(id)}`);
  }
  setKeyLimits(id: string, limits: PatchKeyRequest['limits']): Promise<KeyObject> {
    const body: PatchKeyRequest = { limits };
    return this.call('PATCH', `/admin/keys/${encodeURIComponent(id)}`, body);
  }
  setKeyBudget(id: string, budget: PatchKeyRequest['budget']): Promise<KeyObject> {
    const body: PatchKeyRequest = { budget };
    return this.call('PATCH', `/admin/keys/${encodeURIComponent(id)}`, body);
  }
  revokeKey(id: string): Promise<RevokedKeyObject> {
    return this.call('DELETE', `/admin/keys/${encodeURIComponent(id)}`);
  }
  grantPackage(id: string, body: GrantRequest): Promise<PackageObject> {
    return this.call('POST', `/admin/keys/${encodeURIComponent(id)}/packages`, body);
  }
  usage(query: Query): Promise<ListObject<UsageObject>> {
    return this.call('GET', `/admin/usage${queryString(query)}`);
  }
  createProduct(body: CreateProductRequest): Promise<ProductObject> {
    return this.call('POST', '/admin/products', body);
  }
  listProducts(): Promise<ListObject<ProductObject>> {
    return this.call('GET', '/admin/products');
  }
  updateProduct(id: string, body: PatchProductRequest): Promise<ProductObject> {
    return this.call('PATCH', `/admin/products/${encodeURIComponent(id)}`, body);
  }
  createCodes(body: CreateCodesRequest): Promise<ListObject<GeneratedCodeObject>> {
    return this.call('POST', '/admin/redemption-codes', body);
  }
  listCodes(): Promise<ListObject<CodeObject>> {
    return this.call('GET', '/admin/redemption-codes');
  }
  createWebhook(body: { url: string; events?: string[]; batch_size?: number }): Promise<NewWebhookEndpointObject> {
    return this.call('POST', '/admin/webhooks', body);
  }
  listWebhooks(): Promise<{ data: WebhookEndpointObject[] }> {
    return this.call('GET', '/admin/webhooks');
  }
  webhook(id: string): Promise<WebhookEndpointDetailObject> {
    return this.call('GET', `/admin/webhooks/${encodeURIComponent(id)}`);
  }
  deleteWebhook(id: string): Promise<{ id: string; deleted: boolean }> {
    return this.call('DELETE', `/admin/webhooks/${encodeURIComponent(id)}`);
  }
  webhookDeliveries(id: string, limit: number): Promise<{ data: DeliveryObject[] }> {
    return this.call('GET', `/admin/webhooks/${encodeURIComponent(id)}/deliveries${queryString({ limit })}`);
  }
  redeliver(deliveryId: string): Promise<DeliveryObject> {
    return this.call('POST', `/admin/webhooks/deliveries/${encodeURIComponent(deliveryId)}/redeliver`);
  }
  setLowBalance(accountId: string, tokens: number | null): Promise<{ account_id: string; low_balance_tokens: number | null }> {
    return this.call('PUT', `/admin/accounts/${encodeURIComponent(accountId)}/low-balance`, { tokens });
  }
  ledgerStatus(): Promise<LedgerStatusObject> {
    return this.call('GET', '/admin/ledger');
  }
  reloadModels(): Promise<ModelsReloadedObject> {
    return this.call('POST', '/admin/models/reload');
  }
  upstreams(): Promise<UpstreamPoolList> {
    return this.call('GET', '/admin/upstreams');
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      const reason = (err as { cause?: { code?: string; message?: string } }).cause;
      const cause = reason?.code ?? reason?.message ?? (err as Error).name;
      throw new AdminClientError(`cannot reach ${this.baseUrl} (${cause}). Is the proxy running? Use --url or TOKENMETER_URL.`);
    }
    const text = await res.text();
    // What came back, for a server that is not tokenmeter: its status and content type say what it is.
    const notTokenmeter = () =>
      new AdminClientError(
        `${this.baseUrl} is not tokenmeter: ${method} ${path.split('?')[0]} answered ${res.status} ${res.headers.get('content-type') ?? 'without a content type'}. Check --url or TOKENMETER_URL.`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw notTokenmeter();
    }
    if (res.ok) return parsed as T;
    const error = (parsed as { error?: { message?: unknown; code?: unknown; type?: unknown } } | null)?.error;
    // tokenmeter's errors always name a code and a type; another OpenAI-shaped server's 404 (code 404 or null) does not.
    if (typeof error?.message !== 'string' || typeof error.code !== 'string' || typeof error.type !== 'string') throw notTokenmeter();
    if (res.status === 401)
      throw new AdminClientError(`the admin token was refused: set TOKENMETER_ADMIN_TOKEN to the proxy's ADMIN_TOKEN.`);
    // tokenmeter without ADMIN_TOKEN: its own 404 for a route it does not have, naming this very request.
    if (res.status === 404 && error.code === 'not_found' && error.message === `Unknown route: ${method} ${new URL(url).pathname}`) {
      throw new AdminClientError(`${this.baseUrl} has no admin API: start the proxy with ADMIN_TOKEN set.`);
    }
    throw new AdminClientError(error.message);
  }
}

/** `?a=1&b=2` from the defined values, or nothing. */
function queryString(query: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
  return qs.size > 0 ? `?${qs}` : '';
}
