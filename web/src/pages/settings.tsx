/** The account's settings: who it is (email, name, role, since when) and the password change. */
import type { PageProps } from '../page-props';
import { date } from '../format';
import { PageTitle } from '../ui';
import { PasswordForm } from './password-form';

export function Settings({ me }: PageProps) {
  return (
    <>
      <PageTitle title="Settings">Settings</PageTitle>
      <section aria-labelledby="account-heading">
        <h2 id="account-heading">Account</h2>
        <dl class="pairs account-facts">
          <div>
            <dt>Email</dt>
            <dd>{me.email}</dd>
          </div>
          <div>
            <dt>Name</dt>
            <dd>{me.name || <span class="muted">(none)</span>}</dd>
          </div>
          <div>
            <dt>Role</dt>
            <dd>{me.role === 'admin' ? 'operator (admin)' : 'member'}</dd>
          </div>
          <div>
            <dt>Since</dt>
            <dd>{date(me.created)}</dd>
          </div>
          <div>
            <dt>Account id</dt>
            <dd>
              <code>{me.id}</code>
            </dd>
          </div>
        </dl>
      </section>
      <PasswordForm />
    </>
  );
}
