/** The form that creates an API key: name, expiry, the models it may call, a spending cap, a budget and rate limits. */
import type { CreateOwnKeyRequest, CreatedOwnKeyObject } from '../api-types';
import { api } from '../api';
import { endOfDay } from '../format';
import { ErrorNote, Field, Loaded, formValue, useAction, useResource } from '../ui';

export function CreateKey({ onCreated, onCancel }: { onCreated: (k: CreatedOwnKeyObject) => void; onCancel: () => void }) {
  const action = useAction();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const models = new FormData(form).getAll('models').map(String);
    const cap = formValue(form, 'limit_tokens');
    const limits = limitsOf(form);
    const budget = formValue(form, 'budget_tokens');
    const expires = endOfDay(formValue(form, 'expires'));
    void action.run(async () => {
      const created = await api.createKey({
        name: formValue(form, 'name'),
        ...(expires !== undefined ? { expires_at: expires } : {}),
        ...(models.length > 0 ? { models } : {}),
        ...(cap !== '' ? { limit_tokens: Number(cap) } : {}),
        ...(limits ? { limits } : {}),
        ...(budget !== '' ? { budget: { tokens: Number(budget), period: formValue(form, 'budget_period') as Period } } : {}),
      });
      form.reset();
      onCreated(created);
    });
  };
  return (
    <form onSubmit={submit} class="grid-form" aria-labelledby="key-dialog-title">
      <h2 id="key-dialog-title">Create a key</h2>
      <Field label="Name" name="name" required maxLength={200} hint="To tell your keys apart, e.g. the app that uses it." />
      <Field label="Expires on" name="expires" type="date" hint="Optional; the key stops working after this day (UTC)." />
      <ModelChoice />
      <Field
        label="Spending cap (tokens)"
        name="limit_tokens"
        type="number"
        min={1}
        step={1}
        hint="Optional; the most this key may ever spend."
      />
      <BudgetFields />
      <LimitFields />
      {action.error && <ErrorNote message={action.error} />}
      <div class="buttons">
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create key'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The models a key may be limited to, as checkboxes; none ticked: every model, including ones added later. */
function ModelChoice() {
  const [models] = useResource(() => api.models());
  return (
    <fieldset class="field models-choice" aria-describedby="models-hint">
      <legend>Models</legend>
      <Loaded resource={models} what="the models">
        {(list) => (
          <ul>
            {list.map((m) => (
              <li key={m.id}>
                <label>
                  <input type="checkbox" name="models" value={m.id} /> {m.id}
                </label>
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <small id="models-hint" class="hint">
        Optional; the key may call only the ticked models. None ticked: every model, including ones added later.
      </small>
    </fieldset>
  );
}

type Limits = NonNullable<CreateOwnKeyRequest['limits']>;
type Period = NonNullable<CreateOwnKeyRequest['budget']>['period'];

/** A budget that resets: tokens per UTC day, week (from Monday) or month. */
function BudgetFields() {
  return (
    <fieldset class="field budget-choice" aria-describedby="budget-hint">
      <legend>Budget</legend>
      <Field label="Tokens per period" name="budget_tokens" type="number" min={1} step={1} />
      <div class="field">
        <label for="f-budget-period">Period</label>
        <select id="f-budget-period" name="budget_period">
          <option value="day">day</option>
          <option value="week">week</option>
          <option value="month">month</option>
        </select>
      </div>
      <small id="budget-hint" class="hint">
        Optional; the most this key may spend per UTC day, week (from Monday) or month. Past it, requests get 429 until the next period.
      </small>
    </fieldset>
  );
}

/** The rate-limit fields filled in, or undefined when all are empty (no limits). */
function limitsOf(form: HTMLFormElement): Limits | undefined {
  const limits: Limits = {};
  for (const name of ['rpm', 'tpm', 'max_concurrent'] as const) {
    const value = formValue(form, name);
    if (value !== '') limits[name] = Number(value);
  }
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/** Requests per minute, tokens per minute and requests at once: each optional, checked by the API. */
function LimitFields() {
  return (
    <fieldset class="field limits-choice" aria-describedby="limits-hint">
      <legend>Rate limits</legend>
      <Field label="Requests per minute" name="rpm" type="number" min={1} step={1} />
      <Field label="Tokens per minute" name="tpm" type="number" min={1} step={1} />
      <Field label="Requests at once" name="max_concurrent" type="number" min={1} step={1} />
      <small id="limits-hint" class="hint">
        Optional; a request past a limit gets 429 and is not charged. Empty: no limit of this key's own.
      </small>
    </fieldset>
  );
}
