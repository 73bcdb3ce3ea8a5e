/** The console's and product center's variables: defaults, parsing and one-line refusals. */
import { loadConfig, ConfigError } from '../../src/config/config';
import { stripeSettings } from '../../src/products/stripe-checkout';
import { MAX_GRANT_TOKENS } from '../../src/store/records/account';

describe('console configuration', () => {
  it('defaults: registration closed, a week of idle sessions, 10 failures per 15 minutes, no proxy trusted, no Stripe', () => {
    expect(loadConfig({})).toMatchObject({
      accountRegistration: 'closed',
      sessionIdleHours: 168,
      loginMaxFailures: 10,
      loginFailureWindowMinutes: 15,
      trustProxy: false,
    });
    expect(stripeSettings(loadConfig({}))).toBeUndefined();
  });

  it('parses TRUST_PROXY as Express takes it: a flag, a hop count or addresses', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toBe('10.0.0.0/8, 127.0.0.1');
    expect(loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy).toBe('loopback');
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(ConfigError);
  });

  it('turns Stripe on only with both the secret key and the webhook secret', () => {
    expect(stripeSettings(loadConfig({ STRIPE_SECRET_KEY: 'sk_test_x' }))).toBeUndefined();
    expect(stripeSettings(loadConfig({ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_y' }))).toEqual({
      secretKey: 'sk_test_x',
      webhookSecret: 'whsec_y',
      apiUrl: undefined,
    });
  });

  it('names the variable when a value is wrong', () => {
    expect(() => loadConfig({ ACCOUNT_REGISTRATION: 'maybe' })).toThrow(/ACCOUNT_REGISTRATION: must be open or closed/);
    expect(() => loadConfig({ SESSION_IDLE_HOURS: '0' })).toThrow(/SESSION_IDLE_HOURS/);
  });

  it('takes SIGNUP_TOKENS up to the largest grant, and no trial when unset', () => {
    expect(loadConfig({})).toMatchObject({ signupTokens: undefined, signupTokensValidDays: undefined });
    expect(loadConfig({ SIGNUP_TOKENS: '10000', SIGNUP_TOKENS_VALID_DAYS: '14' })).toMatchObject({
      signupTokens: 10_000,
      signupTokensValidDays: 14,
    });
    expect(() => loadConfig({ SIGNUP_TOKENS: String(MAX_GRANT_TOKENS + 1) })).toThrow(`SIGNUP_TOKENS: must be at most ${MAX_GRANT_TOKENS}`);
    expect(() => loadConfig({ SIGNUP_TOKENS: '0' })).toThrow(/SIGNUP_TOKENS: must be greater than 0/);
  });
});
