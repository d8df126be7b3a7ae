/**
 * The form pieces the pages share: a form that submits without reloading, labelled text, text
 * area and select fields, radio groups and check boxes bound to a value and its setter, the
 * error-and-submit footer, and field problems shown only once the user tried to submit.
 */
import type { ComponentChildren, TargetedEvent } from 'preact';
import { useState } from 'preact/hooks';
import { type Action, Busy, ErrorText, Field } from './ui.js';

type FormProps = Omit<preact.FormHTMLAttributes<HTMLFormElement>, 'onSubmit'> & {
  /** Runs instead of the browser's own submit. */
  onSubmit: (e: TargetedEvent<HTMLFormElement, SubmitEvent>) => void;
  children: ComponentChildren;
};

/** A form whose submit stays in the page. */
export function Form({ onSubmit, children, ...rest }: FormProps) {
  return (
    <form
      {...rest}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(e);
      }}
    >
      {children}
    </form>
  );
}

/** What every labelled field has around its control. */
interface Labelled {
  label: string;
  hint?: ComponentChildren;
  error?: string | null;
}

/** The attributes the pages give a control besides its value (its id and description come from the field). */
interface ControlAttributes {
  name?: string;
  required?: boolean;
  autoComplete?: string;
  spellcheck?: boolean;
  class?: string;
  disabled?: boolean;
  onBlur?: () => void;
}

interface TextAttributes extends ControlAttributes {
  placeholder?: string;
  inputMode?: 'text' | 'decimal' | 'numeric';
}

type Bound<T, A> = A & Labelled & { value: T; onValue: (value: T) => void };

/** A labelled text input bound to `value`. */
export function TextField({ label, hint, error, value, onValue, ...input }: Bound<string, TextAttributes>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => <input {...p} {...input} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}
    </Field>
  );
}

/** A labelled password input bound to `value`; `autoComplete` tells password managers which password it is. */
export function PasswordField({ label, hint, error, value, onValue, ...input }: Bound<string, Omit<ControlAttributes, 'spellcheck'>>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => <input {...p} type="password" {...input} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}
    </Field>
  );
}

/** A labelled text area bound to `value`. */
export function TextAreaField({ label, hint, error, value, onValue, ...area }: Bound<string, TextAttributes>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => <textarea {...p} {...area} value={value} onInput={(e) => onValue(e.currentTarget.value)} />}
    </Field>
  );
}

/** A choice's value and what the user reads for it. */
export type Options = readonly (readonly [value: string, text: ComponentChildren])[];

/** A labelled select of `options` bound to `value`. */
export function SelectField({
  label,
  hint,
  error,
  value,
  onValue,
  options,
  ...select
}: Bound<string, ControlAttributes> & { options: Options }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => (
        <select {...p} {...select} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          {options.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A fieldset of radio buttons named `name`, one per option. */
export function RadioGroup<V extends string>({
  legend,
  name,
  value,
  onValue,
  options,
}: {
  legend: string;
  name: string;
  value: V;
  onValue: (value: V) => void;
  options: readonly (readonly [value: V, text: ComponentChildren])[];
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {options.map(([v, text]) => (
        <label class="check" key={v}>
          <input type="radio" name={name} value={v} checked={value === v} onChange={() => onValue(v)} />
          {text}
        </label>
      ))}
    </fieldset>
  );
}

/** A check box with its text as its label. */
export function Checkbox({
  checked,
  onValue,
  children,
  ...input
}: ControlAttributes & {
  /** What the box sends when ticked (a form's own submit). */
  value?: string;
  checked: boolean;
  onValue: (checked: boolean) => void;
  children: ComponentChildren;
}) {
  return (
    <label class="check">
      <input type="checkbox" {...input} checked={checked} onChange={(e) => onValue(e.currentTarget.checked)} />
      {children}
    </label>
  );
}

/** The end of a form: the action's error, then its submit button, busy while it runs. */
export function SubmitActions({
  action,
  disabled,
  children,
}: {
  action: Pick<Action<unknown[]>, 'busy' | 'error'>;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  return (
    <>
      <ErrorText error={action.error} />
      <div class="actions">
        <Busy type="submit" busy={action.busy} disabled={disabled}>
          {children}
        </Busy>
      </div>
    </>
  );
}

/** The values of a form's fields in one state, a setter per field to bind a control to, and a setter of several. */
export function useFields<T extends object>(initial: T | (() => T)) {
  const [values, setValues] = useState<T>(initial);
  const set =
    <K extends keyof T>(key: K) =>
    (value: T[K]) =>
      setValues((v) => ({ ...v, [key]: value }));
  const update = (patch: Partial<T>) => setValues((v) => ({ ...v, ...patch }));
  return { values, set, update };
}

export interface Problems {
  /** `problem` once the user tried to submit (or left a field that calls `reveal`), else nothing. */
  shown: (problem: string | null) => string | null;
  reveal: () => void;
  hide: () => void;
  /** The submit of a form with one problem at a time: shows it, and runs `action` only without one. */
  submit: (problem: string | null, action: () => void) => void;
}

/** Field problems stay quiet while the user types a first time, and show once they submit. */
export function useProblems(): Problems {
  const [revealed, setRevealed] = useState(false);
  return {
    shown: (problem) => (revealed ? problem : null),
    reveal: () => setRevealed(true),
    hide: () => setRevealed(false),
    submit: (problem, action) => {
      setRevealed(true);
      if (!problem) action();
    },
  };
}
