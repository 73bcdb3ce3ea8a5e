/** The usage ledger's filters (account, key, model, dates) and its CSV download button. */
import { Field } from './ui';

export interface FilterChoices {
  /** Show an account id filter (operators). */
  accounts: boolean;
  /** The keys to choose from, by id and label; unset: a key id field (the operator's, over every account's keys). */
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

export function FilterForm(props: FilterChoices & { onSubmit: (event: SubmitEvent) => void; download: () => void; preparing: boolean }) {
  const { accounts, keys, models, onSubmit, download, preparing } = props;
  return (
    <form class="panel filters" onSubmit={onSubmit} aria-label="Filter the usage">
      {accounts && <Field label="Account id" name="account_id" />}
      {keys ? (
        <Choice id="f-key" label="Key" name="key_id" all="All keys" options={keys.map((k) => ({ value: k.id, label: k.label }))} />
      ) : (
        <Field label="Key id" name="key_id" />
      )}
      <Choice id="f-model" label="Model" name="model" all="All models" options={models.map((m) => ({ value: m, label: m }))} />
      <Field label="From" name="since" type="date" />
      <Field label="To" name="until" type="date" />
      <div class="buttons">
        <button type="submit">Apply filters</button>
        <button type="button" class="secondary" onClick={download} disabled={preparing}>
          {preparing ? 'Preparing CSV…' : 'Download CSV'}
        </button>
      </div>
    </form>
  );
}
