import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import { ROOT, onLinkClick } from './router';

export function Link(props: { to: string; children: ComponentChildren; class?: string; current?: boolean }): JSX.Element {
  return (
    <a href={`${ROOT}${props.to}`} class={props.class} aria-current={props.current ? 'page' : undefined} onClick={(e) => onLinkClick(e, props.to)}>
      {props.children}
    </a>
  );
}

/** A page: its title goes to the document and its heading takes the focus when the page changes (screen readers announce it). */
export function Page(props: { title: string; intro?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren }): JSX.Element {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · notary`;
    heading.current?.focus();
  }, [props.title]);
  return (
    <>
      <div class="page-head">
        <div>
          <h1 ref={heading} tabIndex={-1}>
            {props.title}
          </h1>
          {props.intro ? <p class="intro">{props.intro}</p> : null}
        </div>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </div>
      {props.children}
    </>
  );
}

export function Notice(props: { kind: 'error' | 'success' | 'info'; children: ComponentChildren }): JSX.Element {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

export function ErrorNotice(props: { error: unknown }): JSX.Element | null {
  if (!props.error) return null;
  const message = props.error instanceof ApiError ? props.error.message : props.error instanceof Error ? props.error.message : String(props.error);
  const code = props.error instanceof ApiError ? props.error.code : undefined;
  return (
    <Notice kind="error">
      {message}
      {code ? <span class="muted"> ({code})</span> : null}
    </Notice>
  );
}

/** Loads data on mount (and when `deps` change), optionally every `pollMs` while the tab is visible. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = [], pollMs?: number): { data: T | undefined; error: unknown; reload: () => Promise<void>; loading: boolean } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    try {
      const value = await loadRef.current();
      setData(value);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    setLoading(true);
    void reload();
    if (!pollMs) return undefined;
    const timer = window.setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, pollMs);
    return () => window.clearInterval(timer);
  }, deps);
  return { data, error, reload, loading };
}

/** Runs a form action with a busy state, its error and a success message. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  message: string | null;
  run: (action: () => Promise<string | void>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);
  const run = async (action: () => Promise<string | void>) => {
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      const text = await action();
      if (text) setMessage(text);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, message, run, clear: () => (setError(null), setMessage(null)) };
}

export function ActionResult(props: { action: { error: unknown; message: string | null } }): JSX.Element | null {
  if (props.action.error) return <ErrorNotice error={props.action.error} />;
  if (props.action.message) return <Notice kind="success">{props.action.message}</Notice>;
  return null;
}

export function Loading(): JSX.Element {
  return (
    <p class="muted" role="status" data-loading="">
      Loading…
    </p>
  );
}

export function Stat(props: { label: string; value: ComponentChildren; hint?: ComponentChildren; testid?: string }): JSX.Element {
  return (
    <div class="stat" data-testid={props.testid}>
      <div class="stat-label">{props.label}</div>
      <div class="stat-value">{props.value}</div>
      {props.hint ? <div class="stat-hint">{props.hint}</div> : null}
    </div>
  );
}

/** A column of a table's head: its label, or the label of a right-aligned numeric column. */
export type TableColumn = string | { label: string; num: true };

/** A table's head row, each column a `th scope="col"`; `actions` adds a last column, its label for screen readers only. */
export function TableHead(props: { columns: readonly TableColumn[]; actions?: boolean }): JSX.Element {
  return (
    <thead>
      <tr>
        {props.columns.map((column) =>
          typeof column === 'string' ? (
            <th scope="col" key={column}>
              {column}
            </th>
          ) : (
            <th scope="col" class="num" key={column.label}>
              {column.label}
            </th>
          ),
        )}
        {props.actions ? (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        ) : null}
      </tr>
    </thead>
  );
}

/** The price of each call in credits and in the pay-per-call amount (the operator's Prices page, a member's Plan). */
export function PriceTable(props: { rows: readonly { call: string; credits: number; amount: string }[]; amountLabel: string; testid?: string }): JSX.Element {
  return (
    <div class="table-wrap" tabIndex={0}>
      <table data-testid={props.testid}>
        <TableHead columns={['Call', { label: 'Credits', num: true }, { label: props.amountLabel, num: true }]} />
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.call}>
              <th scope="row">{row.call}</th>
              <td class="num">{row.credits}</td>
              <td class="num">{row.amount}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Badge(props: { kind?: 'ok' | 'warn' | 'bad' | 'neutral' | 'test'; children: ComponentChildren }): JSX.Element {
  return <span class={`badge badge-${props.kind ?? 'neutral'}`}>{props.children}</span>;
}

/** A destructive button that asks once more, inline (keyboard and screen-reader friendly, no modal). */
export function ConfirmButton(props: { label: string; confirm: string; onConfirm: () => void | Promise<void>; disabled?: boolean; name?: string }): JSX.Element {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="button-danger button-small" disabled={props.disabled} aria-label={props.name ? `${props.label} ${props.name}` : undefined} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={props.confirm}>
      <span>{props.confirm}</span>
      <button
        type="button"
        ref={yes}
        class="button-danger button-small"
        onClick={async () => {
          setAsking(false);
          await props.onConfirm();
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" class="button-small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

const numberFormat = new Intl.NumberFormat('en');
export const formatNumber = (value: number): string => numberFormat.format(value);

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' }) + ' UTC';
}

export function formatDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return date.toLocaleDateString('en-GB', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

export function TextField(props: {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'number' | 'date' | 'url' | 'search';
  required?: boolean;
  autocomplete?: string;
  hint?: ComponentChildren;
  min?: string | number;
  max?: string | number;
  step?: string | number;
  inputMode?: 'numeric' | 'decimal' | 'text' | 'email';
  minLength?: number;
  placeholder?: string;
  class?: string;
}): JSX.Element {
  const id = `f-${props.name}`;
  return (
    <div class={`field ${props.class ?? ''}`}>
      <label for={id}>
        {props.label}
        {props.required ? <span class="required" aria-hidden="true"> *</span> : null}
      </label>
      <input
        id={id}
        name={props.name}
        // The runtime value may be any of the declared kinds; Preact's per-kind attribute types cannot follow a variable.
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        required={props.required}
        autoComplete={props.autocomplete}
        min={props.min}
        max={props.max}
        step={props.step}
        inputMode={props.inputMode}
        minLength={props.minLength}
        placeholder={props.placeholder}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
      />
      {props.hint ? (
        <div class="hint" id={`${id}-hint`}>
          {props.hint}
        </div>
      ) : null}
    </div>
  );
}
