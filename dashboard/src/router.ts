import { useEffect, useState } from 'preact/hooks';

/** Every page lives under /dashboard/; the server answers all of them with the same document. */
export const ROOT = '/dashboard';

type Listener = (path: string) => void;
const listeners = new Set<Listener>();

export function currentPath(): string {
  const path = window.location.pathname.startsWith(ROOT) ? window.location.pathname.slice(ROOT.length) : '/';
  return path === '' ? '/' : path;
}

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = `${ROOT}${path}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const listener of listeners) listener(currentPath());
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener(currentPath());
});

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    listeners.add(setPath);
    return () => {
      listeners.delete(setPath);
    };
  }, []);
  return path;
}

/** A link inside the app: a real href (new tabs, keyboard) that navigates without a reload. */
export function onLinkClick(event: MouseEvent, path: string): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(path);
}
