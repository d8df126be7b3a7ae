import { useState } from 'preact/hooks';
import { signInWithKey, signInWithPassword, takeEndMessage } from '../session.js';
import { Form, PasswordField, TextField } from '../forms.js';
import { Busy, ErrorText, useAction, useTitle } from '../ui.js';

/** Sign-in with a username and password (a session token) or with an API key. */
export function SignInPage() {
  useTitle('Sign in');
  const [mode, setMode] = useState<'password' | 'key'>('password');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [notice] = useState(takeEndMessage);
  const action = useAction(() => (mode === 'password' ? signInWithPassword(username, password) : signInWithKey(key)));

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to algohost</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <div class="segmented" role="group" aria-label="Sign in with">
        <button type="button" aria-pressed={mode === 'password'} onClick={() => (setMode('password'), action.clear())}>
          Password
        </button>
        <button type="button" aria-pressed={mode === 'key'} onClick={() => (setMode('key'), action.clear())}>
          API key
        </button>
      </div>
      <Form onSubmit={() => void action.run()}>
        {mode === 'password' ? (
          <>
            <TextField label="Username" name="username" autoComplete="username" required value={username} onValue={setUsername} />
            <PasswordField
              label="Password"
              name="password"
              autoComplete="current-password"
              required
              value={password}
              onValue={setPassword}
            />
          </>
        ) : (
          <PasswordField
            label="API key"
            hint="A key with all four capabilities can do everything the account can; a restricted key only what it holds."
            name="key"
            autoComplete="off"
            required
            value={key}
            onValue={setKey}
          />
        )}
        <ErrorText error={action.error} />
        <Busy type="submit" busy={action.busy}>
          Sign in
        </Busy>
      </Form>
      <p class="hint">
        No password yet? An admin sets one when creating your account, or gives you an API key. The first start of the server writes the
        admin key to <code>data/initial-admin-key</code>.
      </p>
    </main>
  );
}
