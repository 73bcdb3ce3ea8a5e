/** A small client for the admin API, used by the CLI: one method per route, failures as readable messages. */
import type { AccountDetailObject, AccountObject, KeyDetailObject, KeyObject, PackageObject, UsageObject } from '../admin/api-objects';
import type { LimitsInput } from '../limits/limits';

import type { Product as ProductObject } from '../console-api/schemas';
import type { CodeObject } from '../products/product-admin';

export type CreatedKey = KeyObject & { key: string; balance: number };
export type { CodeObject, ProductObject };
type ProductFields = { name?: string; tokens?: number; valid_days?: number; price?: number; currency?: string; active?: boolean };
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

  createAccount(body: {
    email?: string;
    name?: string;
    role?: string;
    password?: string;
    tokens?: number;
    limits?: LimitsInput;
  }): Promise<AccountObject & { balance: number }> {
    return this.call('POST', '/admin/accounts', body);
  }
  listAccounts(query: Query): Promise<{ data: AccountObject[]; has_more: boolean }> {
    return this.call('GET', `/admin/accounts${queryString(query)}`);
  }
  showAccount(id: string): Promise<AccountDetailObject & { keys: KeyObject[] }> {
    return this.call('GET', `/admin/accounts/${encodeURIComponent(id)}`);
  }
  updateAccount(
    id: string,
    body: { name?: string; role?: string; status?: string; password?: string; limits?: LimitsInput | null },
  ): Promise<AccountObject> {
    return this.call('PATCH', `/admin/accounts/${encodeURIComponent(id)}`, body);
  }
  grantAccountPackage(id: string, body: { tokens: number; expires_at?: number }): Promise<PackageObject> {
    return this.call('POST', `/admin/accounts/${encodeURIComponent(id)}/packages`, body);
  }
  accountKeys(id: string): Promise<{ data: KeyObject[] }> {
    return this.call('GET', `/admin/accounts/${encodeURIComponent(id)}/keys`);
  }
  createKey(body: {
    name?: string;
    account_id?: string;
    tokens?: number;
    limit_tokens?: number;
    expires_at?: number;
    models?: string[];
    limits?: LimitsInput;
  }): Promise<CreatedKey> {
    return this.call('POST', '/admin/keys', body);
  }
  listKeys(): Promise<{ data: KeyObject[] }> {
    return this.call('GET', '/admin/keys');
  }
  showKey(id: string): Promise<KeyDetailObject> {
    return this.call('GET', `/admin/keys/${encodeURIComponent(id)}`);
  }
  setKeyLimits(id: string, limits: LimitsInput | null): Promise<KeyObject> {
    return this.call('PATCH', `/admin/keys/${encodeURIComponent(id)}`, { limits });
  }
  revokeKey(id: string): Promise<{ id: string; revoked: boolean; revoked_at: number }> {
    return this.call('DELETE', `/admin/keys/${encodeURIComponent(id)}`);
  }
  grantPackage(id: string, body: { tokens: number; expires_at?: number }): Promise<PackageObject> {
    return this.call('POST', `/admin/keys/${encodeURIComponent(id)}/packages`, body);
  }
  usage(query: Query): Promise<{ data: UsageObject[] }> {
    return this.call('GET', `/admin/usage${queryString(query)}`);
  }
  createProduct(body: ProductFields & { id?: string; name: string; tokens: number; price: number }): Promise<ProductObject> {
    return this.call('POST', '/admin/products', body);
  }
  listProducts(): Promise<{ data: ProductObject[] }> {
    return this.call('GET', '/admin/products');
  }
  updateProduct(id: string, body: ProductFields): Promise<ProductObject> {
    return this.call('PATCH', `/admin/products/${encodeURIComponent(id)}`, body);
  }
  createCodes(body: {
    product_id?: string;
    tokens?: number;
    valid_days?: number;
    count: number;
    expires_at?: number;
  }): Promise<{ data: (CodeObject & { code: string })[] }> {
    return this.call('POST', '/admin/redemption-codes', body);
  }
  listCodes(): Promise<{ data: CodeObject[] }> {
    return this.call('GET', '/admin/redemption-codes');
  }
  reloadModels(): Promise<{ reloaded: boolean; models: number }> {
    return this.call('POST', '/admin/models/reload');
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
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new AdminClientError(`cannot reach ${this.baseUrl} (${cause}). Is the proxy running? Use --url or TOKENMETER_URL.`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AdminClientError(`${this.baseUrl} answered ${res.status} with something that is not tokenmeter's admin API.`);
    }
    if (res.ok) return parsed as T;
    const message = (parsed as { error?: { message?: string } }).error?.message ?? `status ${res.status}`;
    if (res.status === 401)
      throw new AdminClientError(`the admin token was refused: set TOKENMETER_ADMIN_TOKEN to the proxy's ADMIN_TOKEN.`);
    if (res.status === 404 && message.startsWith('Unknown route')) {
      throw new AdminClientError(`${this.baseUrl} has no admin API: start the proxy with ADMIN_TOKEN set.`);
    }
    throw new AdminClientError(message);
  }
}

/** `?a=1&b=2` from the defined values, or nothing. */
function queryString(query: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
  return qs.size > 0 ? `?${qs}` : '';
}
