/**
 * The one way the console talks to the server: same-origin JSON requests to /console/api, with the session cookie.
 * A failure becomes an ApiFailure carrying the API's own message, ready to show to a person.
 */
import type {
  AccountDetail,
  AccountItem,
  AccountListItem,
  AccountObject,
  CodeObject,
  CreateKeyRequest,
  CreatedKey,
  DailyUsage,
  GeneratedCode,
  KeyObject,
  Me,
  ModelObject,
  PackageObject,
  ProductList,
  ProductObject,
  UsageObject,
} from './api-types';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** Input the console refuses before asking the API (a price with too many decimals), with what to fix. */
export class InputProblem extends Error {}

type Query = Record<string, string | number | undefined>;

async function request<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  let url = `/console/api${path}`;
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
    if ([...params].length > 0) url += `?${params}`;
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiFailure(0, null, 'The server could not be reached. Check your connection and try again.');
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const error = (json as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
    const message = typeof error?.message === 'string' ? error.message : `The server answered ${res.status} ${res.statusText}.`;
    throw new ApiFailure(res.status, typeof error?.code === 'string' ? error.code : null, message);
  }
  return json as T;
}

const list = async <T>(path: string, query?: Query) => (await request<{ data: T[] }>('GET', path, undefined, query)).data;

export interface UsageFilter {
  key_id?: string;
  account_id?: string;
  model?: string;
  since?: number;
  until?: number;
  after?: string;
  before?: string;
  limit?: number;
}

export const api = {
  me: () => request<Me>('GET', '/me'),
  register: (body: { email: string; password: string; name?: string }) => request<AccountObject>('POST', '/register', body),
  login: (body: { email: string; password: string }) => request<AccountObject>('POST', '/login', body),
  logout: () => request<unknown>('POST', '/logout', {}),

  keys: () => list<KeyObject>('/keys'),
  createKey: (body: CreateKeyRequest) => request<CreatedKey>('POST', '/keys', body),
  revokeKey: (id: string) => request<unknown>('DELETE', `/keys/${encodeURIComponent(id)}`),

  models: () => list<ModelObject>('/models'),

  usage: (filter: UsageFilter) => list<UsageObject>('/usage', { ...filter }),
  daily: (days: number) => list<DailyUsage>('/usage/daily', { days }),

  products: () => request<ProductList>('GET', '/products'),
  redeem: (code: string) => request<PackageObject>('POST', '/redeem', { code }),
  checkout: (productId: string) => request<{ url: string }>('POST', '/checkout', { product_id: productId }),

  admin: {
    accounts: (query: { search?: string; after?: string; limit?: number }) =>
      request<{ data: AccountListItem[]; has_more: boolean }>('GET', '/admin/accounts', undefined, query),
    account: (id: string) => request<AccountDetail>('GET', `/admin/accounts/${encodeURIComponent(id)}`),
    setStatus: (id: string, status: 'active' | 'disabled') =>
      request<AccountItem>('PATCH', `/admin/accounts/${encodeURIComponent(id)}`, { status }),
    grant: (id: string, body: { tokens: number; expires_at?: number }) =>
      request<PackageObject>('POST', `/admin/accounts/${encodeURIComponent(id)}/packages`, body),
    products: () => list<ProductObject>('/admin/products'),
    createProduct: (body: Omit<ProductObject, 'id'> & { id?: string }) => request<ProductObject>('POST', '/admin/products', body),
    updateProduct: (id: string, body: Partial<Omit<ProductObject, 'id'>>) =>
      request<ProductObject>('PATCH', `/admin/products/${encodeURIComponent(id)}`, body),
    codes: () => list<CodeObject>('/admin/redemption-codes'),
    generateCodes: (body: { product_id?: string; tokens?: number; valid_days?: number; count: number; expires_at?: number }) =>
      request<{ data: GeneratedCode[] }>('POST', '/admin/redemption-codes', body).then((r) => r.data),
    usage: (filter: UsageFilter) => list<UsageObject>('/admin/usage', { ...filter }),
  },
};

/** What to show a person for any thrown value. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiFailure || err instanceof InputProblem) return err.message;
  return 'Something went wrong in the console. Reload the page and try again.';
}
