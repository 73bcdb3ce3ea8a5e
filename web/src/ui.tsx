/** Shared pieces of every page: loading, error and empty states worded for a person, labelled fields, titles. */
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';
import { useLocation } from './router';

export type Resource<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ready'; data: T };

/**
 * Loads on mount and when `deps` change (showing the loading state: it is a different thing now); `reload` loads the
 * same thing again, keeping the old data on screen meanwhile.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[] = []): [Resource<T>, () => void] {
  const [resource, setResource] = useState<Resource<T>>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const loadedFor = useRef<string>();
  useEffect(() => {
    const key = JSON.stringify(deps);
    if (loadedFor.current !== undefined && loadedFor.current !== key) setResource({ state: 'loading' });
    loadedFor.current = key;
    let current = true;
    load().then(
      (data) => current && setResource({ state: 'ready', data }),
      (err: unknown) => current && setResource({ state: 'error', message: messageOf(err) }),
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return [resource, reload];
}

/** Renders a resource: a loading line, the API's message, or the content. */
export function Loaded<T>(props: { resource: Resource<T>; what: string; children: (data: T) => ComponentChildren }) {
  const r = props.resource;
  if (r.state === 'loading') return <p class="loading">Loading {props.what}…</p>;
  if (r.state === 'error') return <ErrorNote message={`Could not load ${props.what}: ${r.message}`} />;
  return <>{props.children(r.data)}</>;
}

export const ErrorNote = ({ message }: { message: string }) => (
  <p class="error" role="alert">
    {message}
  </p>
);

export const Notice = ({ children }: { children: ComponentChildren }) => (
  <p class="notice" role="status">
    {children}
  </p>
);

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="empty">{children}</p>;

/** The page's heading; it takes focus after navigation so screen readers announce the new page. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  const { navigation } = useLocation();
  useEffect(() => {
    document.title = `${title} · tokenmeter`;
    // Not on the first load, where focus belongs at the top of the page; after a navigation, here.
    if (navigation > 0) ref.current?.focus();
  }, [title, navigation]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

type FieldProps = { label: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>;

/** A labelled input with an optional hint tied to it by aria-describedby. */
export function Field({ label, hint, id, ...input }: FieldProps) {
  const fieldId = id ?? `f-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <input id={fieldId} aria-describedby={hint ? `${fieldId}-hint` : undefined} {...input} />
      {hint && (
        <small id={`${fieldId}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/** Runs a form's action with a busy flag and the API's message on failure. */
export function useAction(): {
  busy: boolean;
  error: string | undefined;
  run: (action: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

/** The value of a form's field by name (forms are uncontrolled; read on submit). */
export function formValue(form: HTMLFormElement, name: string): string {
  const element = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
  return element ? element.value.trim() : '';
}

/** A record as people know it (an email, a key's name), its id in the title; the id itself, cut short, without a name. */
export function Named({ name, id }: { name: string | null | undefined; id: string }) {
  return name ? (
    <span class="named" title={id}>
      {name}
    </span>
  ) : (
    <code class="id" title={id}>
      {id}
    </code>
  );
}
