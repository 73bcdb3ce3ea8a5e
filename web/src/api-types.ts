/** The shapes the console API answers with (issue 11's contract), as the console reads them. */

export interface Usage {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  charged_tokens: number;
}

export interface PackageObject {
  id: string;
  tokens: number;
  remaining: number;
  expires_at: number | null;
  created: number;
}

export interface AccountObject {
  id: string;
  email: string;
  name: string;
  role: 'member' | 'admin';
  status: 'active' | 'disabled';
  created: number;
}

export interface AccountDetail extends AccountObject {
  balance: number;
  reserved: number;
  debt: number;
  packages: PackageObject[];
  usage: Usage;
}

export type Me = AccountDetail;

export interface KeyObject {
  id: string;
  name: string;
  prefix: string;
  created: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  models: string[] | null;
  limit_tokens: number | null;
  spent_tokens: number;
}

export interface CreatedKey extends KeyObject {
  key: string;
}

export interface UsageObject {
  request_id: string;
  account_id?: string;
  key_id: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  charged_tokens: number;
  estimated: boolean;
  stream: boolean;
  status: number;
  created: number;
  cursor: string;
}

export interface DailyUsage extends Usage {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  model: string;
}

export interface ProductObject {
  id: string;
  name: string;
  tokens: number;
  valid_days: number | null;
  /** In the currency's smallest unit (cents), as Stripe counts. */
  price: number;
  currency: string;
  active: boolean;
}

export interface CodeObject {
  id: string;
  product_id: string | null;
  tokens: number;
  status: 'unused' | 'redeemed' | 'expired';
  redeemed_by: string | null;
  redeemed_at: number | null;
  expires_at: number | null;
  created: number;
}

export interface GeneratedCode extends CodeObject {
  code: string;
}
