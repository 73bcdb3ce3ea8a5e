/** The account holder's password change, on the settings page: the current password, then the new one. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Field, Notice, useAction } from '../ui';

export function PasswordForm() {
  const action = useAction();
  const [ended, setEnded] = useState<number>();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value;
    setEnded(undefined);
    void action.run(async () => {
      const changed = await api.changePassword({ current_password: value('current_password'), new_password: value('new_password') });
      form.reset();
      setEnded(changed.sessions_ended);
    });
  };
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form onSubmit={submit} class="stack narrow">
        <Field label="Current password" name="current_password" type="password" autocomplete="current-password" required />
        <Field
          label="New password"
          name="new_password"
          type="password"
          autocomplete="new-password"
          minLength={10}
          required
          hint="At least 10 characters. Every other session of this account is signed out; this one stays."
        />
        {action.error && <ErrorNote message={action.error} />}
        {ended !== undefined && (
          <Notice>Password changed. {ended === 1 ? '1 other session was' : `${ended} other sessions were`} signed out.</Notice>
        )}
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Changing the password…' : 'Change password'}
        </button>
      </form>
    </section>
  );
}
