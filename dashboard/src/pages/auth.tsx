import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNotice, Link, Page, TextField, useAction } from '../components';
import { navigate } from '../router';
import { useSession } from '../session';
import type { SessionInfo } from '../types';

export function SignIn(): JSX.Element {
  const { session, update } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      update(await api<SessionInfo>('POST', '/signin', { email, password }));
      navigate('/', { replace: true });
    });
  };
  return (
    <div class="auth">
      <Page title="Sign in" intro="Your API keys, credits and usage.">
        <form onSubmit={submit} class="card stack" aria-describedby="signin-error" noValidate={false}>
          <div id="signin-error">
            <ErrorNotice error={action.error} />
          </div>
          <TextField label="Email" name="email" type="email" autocomplete="username" required value={email} onInput={setEmail} inputMode="email" />
          <TextField label="Password" name="password" type="password" autocomplete="current-password" required value={password} onInput={setPassword} />
          <button type="submit" class="button-primary" disabled={action.busy}>
            {action.busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        {session.signup === 'open' ? (
          <p>
            No account yet? <Link to="/signup">Create one</Link>.
          </p>
        ) : (
          <p class="muted">Accounts on this server are created by its operators.</p>
        )}
      </Page>
    </div>
  );
}

export function SignUp(): JSX.Element {
  const { session, update } = useSession();
  const [email, setEmail] = useState('');
  const [organisation, setOrganisation] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      update(await api<SessionInfo>('POST', '/signup', { email, password, ...(organisation.trim() ? { organisation: organisation.trim() } : {}) }));
      navigate('/', { replace: true });
    });
  };
  if (session.signup !== 'open') {
    return (
      <div class="auth">
        <Page title="Sign-up is closed">
          <p>Accounts on this server are created by its operators.</p>
          <Link to="/signin">Sign in</Link>
        </Page>
      </div>
    );
  }
  return (
    <div class="auth">
      <Page title="Create an account" intro="An organisation of your own, with free credits to start.">
        <form onSubmit={submit} class="card stack">
          <ErrorNotice error={action.error} />
          <TextField label="Email" name="email" type="email" autocomplete="username" required value={email} onInput={setEmail} inputMode="email" />
          <TextField
            label="Organisation"
            name="organisation"
            autocomplete="organization"
            value={organisation}
            onInput={setOrganisation}
            hint="Optional; your email is used when you leave it empty. Multi-party payment envelopes name your organisation as the party."
          />
          <TextField
            label="Password"
            name="password"
            type="password"
            autocomplete="new-password"
            required
            minLength={session.password_min_length}
            value={password}
            onInput={setPassword}
            hint={`At least ${session.password_min_length} characters.`}
          />
          <button type="submit" class="button-primary" disabled={action.busy}>
            {action.busy ? 'Creating…' : 'Create account'}
          </button>
        </form>
        <p>
          Have an account? <Link to="/signin">Sign in</Link>.
        </p>
      </Page>
    </div>
  );
}
