/** How the console writes numbers, times and money for people. */

const DAY = 86_400;

export const tokens = (n: number): string => n.toLocaleString('en-US');
/** A number with its noun, singular for exactly one: "1 token", "2 tokens", "1,000 requests". */
export const counted = (n: number, one: string, many = `${one}s`): string => `${tokens(n)} ${n === 1 ? one : many}`;

export function date(unixSeconds: number | null | undefined): string {
  if (unixSeconds === null || unixSeconds === undefined) return '—';
  return new Date(unixSeconds * 1000).toLocaleDateString('en-US', { dateStyle: 'medium' });
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Within a week of expiring (and not yet expired). */
export const expiresSoon = (expiresAt: number | null): boolean =>
  expiresAt !== null && expiresAt > nowSeconds() && expiresAt - nowSeconds() < 7 * DAY;

/** A time in the month-day-time form the tables use, the year only when it is not this year's, plus `extra` fields. */
function tableTime(unixSeconds: number, extra: Intl.DateTimeFormatOptions): string {
  const d = new Date(unixSeconds * 1000);
  const otherYear = d.getFullYear() !== new Date().getFullYear();
  return d.toLocaleString('en-US', {
    ...(otherYear ? { year: 'numeric' } : {}),
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    ...extra,
  });
}

/** A time in a table: short and on one line ("Nov 25, 14:03"), the year only when it is not this year's. */
export const shortDateTime = (unixSeconds: number): string => tableTime(unixSeconds, {});

/**
 * A time to the second, with the zone it is in (the browser's): "Nov 25, 14:03:27 UTC", the year only when it is not
 * this year's. The usage ledger's, where requests a few seconds apart must read apart.
 */
export const dateTimeWithZone = (unixSeconds: number): string => tableTime(unixSeconds, { second: '2-digit', timeZoneName: 'short' });

/** The exact time, for a title beside a short one: ISO 8601 in UTC. */
export const isoTime = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/**
 * How many decimals the currency's minor unit has: 2 for usd (cents), 0 for jpy, 3 for kwd. ISO 4217 as Intl knows
 * it, which is how Stripe counts prices too; 2 for a code Intl does not know.
 */
export function minorDigits(currency: string): number {
  try {
    return (
      new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions().maximumFractionDigits ?? 2
    );
  } catch {
    return 2;
  }
}

/** A price, which the API keeps in the currency's smallest unit (as Stripe does), written for people: "$12.50". */
export function money(minorUnits: number, currency: string): string {
  const major = minorUnits / 10 ** minorDigits(currency);
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(major);
  } catch {
    return `${major.toFixed(2)} ${currency}`;
  }
}

/**
 * A price as typed, in the currency's main unit ("12.5" dollars), as the whole number of minor units the API takes
 * (1250 cents). Done on the digits, not by multiplying a float; undefined when the text is not such an amount or has
 * more decimals than the currency has (no silent rounding).
 */
export function toMinorUnits(text: string, currency: string): number | undefined {
  const digits = minorDigits(currency);
  const m = /^(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m || m[1] + (m[2] ?? '') === '' || (m[2] ?? '').length > digits) return undefined;
  const minor = Number(m[1] + (m[2] ?? '').padEnd(digits, '0'));
  return Number.isSafeInteger(minor) ? minor : undefined;
}

/** Minor units back to the main unit's digits, for a form's field: 1250 cents → "12.50". */
export function fromMinorUnits(minorUnits: number, currency: string): string {
  const digits = minorDigits(currency);
  if (digits === 0) return String(minorUnits);
  const s = String(minorUnits).padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
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
