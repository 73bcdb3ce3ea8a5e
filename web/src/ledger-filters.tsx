/** The usage ledger's filters (account, key, model, dates) and its CSV download button. */
import { accountLookup, keyLookup, SearchField } from './ledger-lookup';
import { ErrorNote, Field } from './ui';

export interface FilterChoices {
  /** Show an account search field (operators). */
  accounts: boolean;
  /** The keys to choose from, by id and label; unset: a key search field (the operator's, over every account's keys). */
  keys?: { id: string; label: string }[];
  /** The models to choose from. */
  models: string[];
}

/** A labelled dropdown whose first choice, "All …", filters nothing. */
function Choice(props: { id: string; label: string; name: string; all: string; options: { value: string; label: string }[] }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.name}>
        <option value="">{props.all}</option>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function FilterForm(
  props: FilterChoices & {
    onSubmit: (event: SubmitEvent) => void;
    download: () => void;
    preparing: boolean;
    /** Why the filters were not applied (a search that names no account, or several). */
    problem?: string;
  },
) {
  const { accounts, keys, models, onSubmit, download, preparing, problem } = props;
  return (
    <form class="panel filters" onSubmit={onSubmit} aria-label="Filter the usage">
      {accounts && <SearchField label="Account" name="account_id" hint="An email, a name or an id" lookup={accountLookup} />}
      {keys ? (
        <Choice id="f-key" label="Key" name="key_id" all="All keys" options={keys.map((k) => ({ value: k.id, label: k.label }))} />
      ) : (
        <SearchField label="Key" name="key_id" hint="A key's name, prefix (sk-…) or id" lookup={keyLookup} />
      )}
      <Choice id="f-model" label="Model" name="model" all="All models" options={models.map((m) => ({ value: m, label: m }))} />
      <Field label="From" name="since" type="date" />
      <Field label="To" name="until" type="date" />
      {problem && <ErrorNote message={problem} />}
      <div class="buttons">
        <button type="submit">Apply filters</button>
        <button type="button" class="secondary" onClick={download} disabled={preparing}>
          {preparing ? 'Preparing CSV…' : 'Download CSV'}
        </button>
      </div>
    </form>
  );
}
