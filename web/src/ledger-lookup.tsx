/**
 * The operator's account and key filters as search fields: what the operator types (an email, a name, a key's prefix,
 * an id) brings suggestions as they type, and on Apply becomes one id, or a sentence saying why it names none.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import type { AccountListItemObject, KeyObject } from './api-types';

/** How long typing pauses before the suggestions are looked up: one request per pause, not per keystroke. */
const SUGGEST_DELAY_MS = 250;
const SUGGESTIONS = 8;
/** How many matches Apply reads to tell one from several. */
const MATCHES = 20;

interface Suggestion {
  value: string;
  label: string;
}

/** The typed text as an id (undefined: no filter), or a sentence on why it names none. */
export type Resolution = { id: string | undefined } | { problem: string };

/** A thing the ledger filters by, found by what the operator types. */
export interface Lookup {
  /** A few of what `text` may mean, for the field's list. */
  suggest: (text: string) => Promise<Suggestion[]>;
  /** What `text` names; a key within `accountId` when the account filter names one. */
  resolve: (text: string, accountId?: string) => Promise<Resolution>;
}

/** One match by `exact` (a whole email, prefix or name) if there is one, else the only match. */
function pick<T extends { id: string }>(
  text: string,
  matches: T[],
  more: boolean,
  exact: (item: T) => (string | null)[],
  nouns: [string, string],
): Resolution {
  const wanted = text.toLowerCase();
  const exactly = matches.filter((m) => exact(m).some((field) => field?.toLowerCase() === wanted));
  if (exactly.length === 1) return { id: exactly[0].id };
  if (matches.length === 1) return { id: matches[0].id };
  if (matches.length === 0) return { problem: `No ${nouns[0]} matches “${text}”.` };
  const count = more ? `More than ${matches.length}` : String(matches.length);
  return { problem: `${count} ${nouns[1]} match: pick one from the list.` };
}

/** An id as the store makes them (`acc_…`, `key_…`): used as typed. */
const isId = (kind: 'acc' | 'key', text: string) => new RegExp(`^${kind}_[0-9a-z]+$`).test(text);

async function accountsMatching(text: string, limit: number): Promise<{ data: AccountListItemObject[]; more: boolean }> {
  const page = await api.admin.accounts({ search: text, limit });
  return { data: page.data, more: page.has_more };
}

/** Accounts by email or name (any part, any case), or by id. */
export const accountLookup: Lookup = {
  async suggest(text) {
    const { data } = await accountsMatching(text, SUGGESTIONS);
    return data.map((a) => ({ value: a.email ?? a.id, label: a.name ? `${a.name} · ${a.id}` : a.id }));
  },
  async resolve(text) {
    if (text === '') return { id: undefined };
    if (isId('acc', text)) return { id: text };
    const { data, more } = await accountsMatching(text, MATCHES);
    return pick(text, data, more, (a) => [a.email, a.name], ['account', 'accounts']);
  },
};

async function keysMatching(text: string, accountId: string | undefined, limit: number): Promise<{ data: KeyObject[]; more: boolean }> {
  // One more than asked tells whether there are more.
  const keys = await api.admin.keys({ search: text, account_id: accountId, limit: limit + 1 });
  return { data: keys.slice(0, limit), more: keys.length > limit };
}

/** Keys by name, prefix (`sk-…`) or id, within the account filtered by when there is one. */
export const keyLookup: Lookup = {
  async suggest(text) {
    const { data } = await keysMatching(text, undefined, SUGGESTIONS);
    return data.map((k) => ({ value: k.prefix, label: k.name ? `${k.name} · ${k.id}` : k.id }));
  },
  async resolve(text, accountId) {
    if (text === '') return { id: undefined };
    if (isId('key', text)) return { id: text };
    const { data, more } = await keysMatching(text, accountId, MATCHES);
    return pick(text, data, more, (k) => [k.prefix, k.name], ['key', 'keys']);
  },
};

/**
 * A text field whose suggestions (a datalist) follow what is typed, looked up once typing pauses. A failed lookup
 * only leaves the list as it was: Apply says what is wrong.
 */
export function SearchField(props: { label: string; name: string; hint: string; lookup: Lookup }) {
  const { label, name, hint, lookup } = props;
  const id = `f-${name}`;
  const [text, setText] = useState('');
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  useEffect(() => {
    const typed = text.trim();
    if (typed === '') return setSuggestions([]);
    let current = true;
    const timer = setTimeout(() => {
      lookup.suggest(typed).then(
        (found) => current && setSuggestions(found),
        () => undefined,
      );
    }, SUGGEST_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [text]);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type="search"
        list={`${id}-list`}
        autocomplete="off"
        aria-describedby={`${id}-hint`}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <datalist id={`${id}-list`}>
        {suggestions.map((s) => (
          <option key={`${s.value} ${s.label}`} value={s.value} label={s.label} />
        ))}
      </datalist>
      <small id={`${id}-hint`} class="hint">
        {hint}
      </small>
    </div>
  );
}
