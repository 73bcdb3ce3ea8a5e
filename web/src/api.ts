/**
 * The one way the console talks to the server: same-origin JSON requests to /console/api, with the session cookie.
 * A failure becomes an ApiFailure carrying the API's own message, ready to show to a person.
 */
import type {
  AccountDetailObject,
  AccountListQuery,
  AccountObject,
  AccountPageObject,
  CheckoutObject,
  CodeObject,
  CreateCodesRequest,
  CreatedOwnKeyObject,
  CreateOwnKeyRequest,
  CreateProductRequest,
  CreateWebhookRequest,
  DeliveryObject,
  DailyUsageObject,
  DeletedKeyObject,
  GeneratedCodeObject,
  GrantRequest,
  KeyListQuery,
  KeyObject,
  ListObject,
  LoggedOutObject,
  LoginRequest,
  MeObject,
  ModelListObject,
  ModelObject,
  OperatorUsageObject,
  OperatorUsageQuery,
  OwnAccountObject,
  OwnKeyObject,
  PackageObject,
  PasswordChangedObject,
  PasswordChangeRequest,
  PatchProductRequest,
  ProductObject,
  RegisterRequest,
  SessionObject,
  ShopObject,
  UpdateAccountRequest,
  UpstreamPoolObject,
  UsageObject,
  NewWebhookEndpointObject,
  WebhookEndpointObject,
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

const list = async <T>(path: string, query?: Query) => (await request<ListObject<T>>('GET', path, undefined, query)).data;

/** The usage routes' query: the operator's has `account_id` too. */
export type UsageFilter = OperatorUsageQuery;

export const api = {
  me: () => request<MeObject>('GET', '/me'),
  /** Whether there is a session: 200 either way, so asking it signed out logs no failed request in the browser. */
  session: () => request<SessionObject>('GET', '/session'),
  register: (body: RegisterRequest) => request<OwnAccountObject>('POST', '/register', body),
  login: (body: LoginRequest) => request<OwnAccountObject>('POST', '/login', body),
  logout: () => request<LoggedOutObject>('POST', '/logout', {}),
  changePassword: (body: PasswordChangeRequest) => request<PasswordChangedObject>('POST', '/password', body),

  keys: () => list<OwnKeyObject>('/keys'),
  createKey: (body: CreateOwnKeyRequest) => request<CreatedOwnKeyObject>('POST', '/keys', body),
  revokeKey: (id: string) => request<DeletedKeyObject>('DELETE', `/keys/${encodeURIComponent(id)}`),

  models: async () => (await request<ModelListObject>('GET', '/models')).data as ModelObject[],

  usage: (filter: UsageFilter) => list<UsageObject>('/usage', { ...filter }),
  daily: (days: number) => list<DailyUsageObject>('/usage/daily', { days }),

  products: () => request<ShopObject>('GET', '/products'),
  redeem: (code: string) => request<PackageObject>('POST', '/redeem', { code }),
  checkout: (productId: string) => request<CheckoutObject>('POST', '/checkout', { product_id: productId }),

  admin: {
    accounts: (query: AccountListQuery) => request<AccountPageObject>('GET', '/admin/accounts', undefined, query),
    /** Keys by name, prefix or id (`search`), of one account or all. */
    keys: (query: KeyListQuery) => list<KeyObject>('/admin/keys', { ...query }),
    account: (id: string) => request<AccountDetailObject>('GET', `/admin/accounts/${encodeURIComponent(id)}`),
    setStatus: (id: string, status: NonNullable<UpdateAccountRequest['status']>) => {
      const body: UpdateAccountRequest = { status };
      return request<AccountObject>('PATCH', `/admin/accounts/${encodeURIComponent(id)}`, body);
    },
    grant: (id: string, body: GrantRequest) => request<PackageObject>('POST', `/admin/accounts/${encodeURIComponent(id)}/packages`, body),
    products: () => list<ProductObject>('/admin/products'),
    createProduct: (body: CreateProductRequest) => request<ProductObject>('POST', '/admin/products', body),
    updateProduct: (id: string, body: PatchProductRequest) =>
      request<ProductObject>('PATCH', `/admin/products/${encodeURIComponent(id)}`, body),
    codes: () => list<CodeObject>('/admin/redemption-codes'),
    generateCodes: (body: CreateCodesRequest) =>
      request<ListObject<GeneratedCodeObject>>('POST', '/admin/redemption-codes', body).then((r) => r.data),
    usage: (filter: UsageFilter) => list<OperatorUsageObject>('/admin/usage', { ...filter }),
    webhooks: () => list<WebhookEndpointObject>('/admin/webhooks'),
    createWebhook: (body: CreateWebhookRequest) => request<NewWebhookEndpointObject>('POST', '/admin/webhooks', body),
    // The answer (the id, deleted) tells the console nothing it does not know: it reloads the list.
    deleteWebhook: (id: string) => request<unknown>('DELETE', `/admin/webhooks/${encodeURIComponent(id)}`),
    deliveries: (endpointId: string) => list<DeliveryObject>(`/admin/webhooks/${encodeURIComponent(endpointId)}/deliveries`, { limit: 50 }),
    redeliver: (deliveryId: string) =>
      request<DeliveryObject>('POST', `/admin/webhooks/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, {}),
    upstreams: () => list<UpstreamPoolObject>('/admin/upstreams'),
  },
};

/** What to show a person for any thrown value. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiFailure || err instanceof InputProblem) return err.message;
  return 'Something went wrong in the console. Reload the page and try again.';
}
