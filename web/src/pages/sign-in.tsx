/** Sign in, and sign up when the operator opened registration (the API says so when it is closed). */
import { api } from '../api';
import { Link } from '../router';
import { ErrorNote, Field, PageTitle, formValue, useAction } from '../ui';

export function SignIn({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const action = useAction();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void action.run(async () => {
      await api.login({ email: formValue(form, 'email'), password: (form.elements.namedItem('password') as HTMLInputElement).value });
      await onSignedIn();
    });
  };
  return (
    <section class="auth">
      <PageTitle title="Sign in">Sign in</PageTitle>
      <form onSubmit={submit} class="stack">
        <Field label="Email" name="email" type="email" autocomplete="username" required />
        <Field label="Password" name="password" type="password" autocomplete="current-password" required />
        {action.error && <ErrorNote message={action.error} />}
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        No account yet? <Link href="/console/signup">Sign up</Link> (if the operator allows it), or ask the operator for one.
      </p>
    </section>
  );
}

export function SignUp({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const action = useAction();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const email = formValue(form, 'email');
    const password = (form.elements.namedItem('password') as HTMLInputElement).value;
    const name = formValue(form, 'name');
    void action.run(async () => {
      await api.register({ email, password, ...(name ? { name } : {}) });
      await api.login({ email, password });
      await onSignedIn();
    });
  };
  return (
    <section class="auth">
      <PageTitle title="Sign up">Create an account</PageTitle>
      <form onSubmit={submit} class="stack">
        <Field label="Name" name="name" autocomplete="name" hint="Optional; shown to you and the operator." maxLength={200} />
        <Field label="Email" name="email" type="email" autocomplete="username" required />
        <Field
          label="Password"
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={10}
          required
          hint="At least 10 characters."
        />
        {action.error && <ErrorNote message={action.error} />}
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Creating your account…' : 'Create account'}
        </button>
      </form>
      <p>
        Already have an account? <Link href="/console/signin">Sign in</Link>.
      </p>
    </section>
  );
}
