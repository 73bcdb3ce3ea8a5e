/** How the console writes numbers, times and money for people. */

const DAY = 86_400;

export const tokens = (n: number): string => n.toLocaleString('en-US');

export function dateTime(unixSeconds: number | null | undefined): string {
  if (unixSeconds === null || unixSeconds === undefined) return '—';
  return new Date(unixSeconds * 1000).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' });
}

export function date(unixSeconds: number | null | undefined): string {
  if (unixSeconds === null || unixSeconds === undefined) return '—';
  return new Date(unixSeconds * 1000).toLocaleDateString('en-US', { dateStyle: 'medium' });
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Within a week of expiring (and not yet expired). */
export const expiresSoon = (expiresAt: number | null): boolean =>
  expiresAt !== null && expiresAt > nowSeconds() && expiresAt - nowSeconds() < 7 * DAY;

/** Prices are in the currency's smallest unit, as Stripe counts them. */
export function money(minorUnits: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(minorUnits / 100);
  } catch {
    return `${(minorUnits / 100).toFixed(2)} ${currency}`;
  }
}

/** A date input's value (YYYY-MM-DD) as the Unix time at the end of that day, UTC; undefined when empty. */
export function endOfDay(value: string): number | undefined {
  if (value === '') return undefined;
  return Math.floor(Date.parse(`${value}T23:59:59Z`) / 1000);
}

/** A date input's value as the Unix time at the start of that day, UTC; undefined when empty. */
export function startOfDay(value: string): number | undefined {
  if (value === '') return undefined;
  return Math.floor(Date.parse(`${value}T00:00:00Z`) / 1000);
}
