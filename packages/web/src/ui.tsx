/**
 * The small set of pieces every page is made of: loading data with its error, running an
 * action with its busy state and the API's message next to the control that caused it, labelled
 * fields, tables, a copy button, a confirmation dialog and a progress bar.
 */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { AlgohostError } from '@algohost/client';

/** The message to show for a failure: the API's own message when there is one. */
export function messageOf(err: unknown): string {
  if (err instanceof AlgohostError) return err.message || `HTTP ${err.status}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change; a newer load wins over an older one still in flight. The
 * request starts right after the render (a layout effect), not after the next frame as a plain
 * effect would: a page whose loads depend on each other otherwise waits a frame per step.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useLayoutEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (err: unknown) => live && setState({ data: undefined, error: messageOf(err), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export interface Action<A extends unknown[]> {
  run: (...args: A) => Promise<boolean>;
  busy: boolean;
  error: string | null;
  clear: () => void;
}

/** An operation started by the user: `run` resolves true when it worked; `error` holds the API's message. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const run = async (...args: A): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await fn(...args);
      return true;
    } catch (err) {
      if (mounted.current) setError(messageOf(err));
      return false;
    } finally {
      if (mounted.current) setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(null) };
}

/** An error message announced to screen readers; nothing when there is no error. */
export function ErrorText({ error, id }: { error: string | null | undefined; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error}
    </p>
  );
}

/** A page section's loading and error states; renders `children(data)` once loaded. */
export function Show<T>({ loaded, children, label }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren; label: string }) {
  if (loaded.error)
    return (
      <div class="load-error">
        <ErrorText error={`Could not load ${label}: ${loaded.error}`} />
        <button type="button" onClick={loaded.reload}>
          Try again
        </button>
      </div>
    );
  if (loaded.data === undefined)
    return (
      <p class="muted" aria-busy="true">
        Loading {label}…
      </p>
    );
  return <>{children(loaded.data)}</>;
}

/** One column of a Table: its header and what each row shows in it. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** A class for the column's cells and header (`wide`: hidden on narrow screens). */
  class?: string;
}

/**
 * A table of rows that scrolls sideways on its own (focusable, so keyboards can scroll it), or
 * the `empty` text when there are no rows and one is given.
 */
export function Table<T>({
  rows,
  columns,
  rowKey,
  empty,
}: {
  rows: T[];
  columns: (Column<T> | false)[];
  rowKey: (row: T) => string;
  empty?: ComponentChildren;
}) {
  if (rows.length === 0 && empty !== undefined) return <p class="muted">{empty}</p>;
  const shown = columns.filter((c): c is Column<T> => c !== false);
  return (
    <div class="table-wrap" tabIndex={0}>
      <table>
        <thead>
          <tr>
            {shown.map((c) => (
              <th scope="col" key={c.header} class={c.class}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {shown.map((c) => (
                <td key={c.header} class={c.class}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type FieldProps = {
  label: string;
  hint?: ComponentChildren;
  error?: string | null;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ComponentChildren;
};

/** A label, the control (given its id and description), a hint and the field's own error. */
export function Field({ label, hint, error, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      <ErrorText error={error} id={errorId} />
    </div>
  );
}

export function Busy({ busy, children, ...rest }: ButtonHTMLAttributes & { busy: boolean; children: ComponentChildren }) {
  return (
    <button {...rest} disabled={busy || rest.disabled} aria-busy={busy}>
      {busy ? <span class="spinner" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

/** Copies `text`; says so for a moment (and to screen readers). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <>
      <button type="button" class="secondary small" onClick={copy}>
        {label}
      </button>
      <span class="copy-state" role="status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select the text and copy it by hand' : ''}
      </span>
    </>
  );
}

/** A block of text to copy (a command, a URL, a key). */
export function CopyBlock({ text, label, copyLabel = `Copy ${label}` }: { text: string; label: string; copyLabel?: string }) {
  return (
    <div class="copy-block">
      <pre tabIndex={0} aria-label={label}>
        <code>{text}</code>
      </pre>
      <CopyButton text={text} label={copyLabel} />
    </div>
  );
}

/** A modal dialog (the native <dialog>: focus stays inside, Escape closes it). */
export function Dialog({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <h2 id={titleId}>{title}</h2>
      {open ? children : null}
    </dialog>
  );
}

/** Asks before something that cannot be undone; `confirmText` must be typed when given. */
export function ConfirmButton({
  label,
  question,
  confirmText,
  onConfirm,
  busy,
  error,
}: {
  label: string;
  question: ComponentChildren;
  confirmText?: string;
  onConfirm: () => Promise<boolean>;
  busy: boolean;
  error: string | null;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  return (
    <>
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        {label}
      </button>
      <Dialog title={label} open={open} onClose={() => setOpen(false)}>
        <form
          method="dialog"
          onSubmit={async (e) => {
            e.preventDefault();
            if (await onConfirm()) setOpen(false);
          }}
        >
          <div>{question}</div>
          {confirmText && (
            <Field label={`Type ${confirmText} to confirm`}>
              {(p) => <input {...p} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autoComplete="off" />}
            </Field>
          )}
          <ErrorText error={error} />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <Busy type="submit" class="danger" busy={busy} disabled={confirmText !== undefined && typed !== confirmText}>
              {label}
            </Busy>
          </div>
        </form>
      </Dialog>
    </>
  );
}

export function ProgressBar({ value, max, label }: { value: number; max: number | undefined; label: string }) {
  const pct = max ? Math.round((value / max) * 100) : undefined;
  return (
    <div class="progress">
      <progress value={max ? value : undefined} max={max} aria-label={label} />
      <span>{pct !== undefined ? `${pct}%` : formatBytes(value)}</span>
    </div>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A time as the reader's locale says it, with the exact value on hover. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={iso}>
      {d.toLocaleString()}
    </time>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

/** Sets the document title (what a screen reader announces after navigation). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · algohost`;
  }, [title]);
}
