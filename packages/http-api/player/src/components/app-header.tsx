import { token } from '../api.js';

interface Props {
  /** The open bag's path, once its info is in. */
  path: string | undefined;
  needToken: boolean;
  onToken(value: string): void;
}

/** The page's title bar: the open bag, the token field (when the server asked for one or one is set), the API docs. */
export function AppHeader(p: Props) {
  return (
    <header>
      <h1>
        vlink-bag <span class="muted">player</span>
      </h1>
      {p.path ? <span class="mono current-bag">{p.path}</span> : null}
      <span class="spacer" />
      {p.needToken || token() ? (
        <form
          class="token"
          onSubmit={(e) => {
            e.preventDefault();
            const input = (e.currentTarget as HTMLFormElement).elements.namedItem('token') as HTMLInputElement;
            p.onToken(input.value.trim());
          }}
        >
          <label>
            Token{' '}
            <input
              name="token"
              type="password"
              autocomplete="off"
              placeholder={p.needToken ? 'required by this server' : '••••'}
            />
          </label>
          <button type="submit">Use</button>
        </form>
      ) : null}
      <a href="/v1/docs" target="_blank" rel="noreferrer">
        API docs
      </a>
    </header>
  );
}
