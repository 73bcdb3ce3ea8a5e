/** A small History-API router: the console's pages are paths under /console/, and links navigate without reloading. */
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
/** Counts navigations, so a page can tell it was navigated to again (its path alone may not change). */
let navigations = 0;

function changed(): void {
  navigations++;
  for (const listener of listeners) listener();
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  changed();
}

addEventListener('popstate', changed);

/** The current path and query, and how many navigations happened; components using it re-render on navigation. */
export function useLocation(): { path: string; query: URLSearchParams; navigation: number } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return { path: location.pathname.replace(/\/+$/, '') || '/', query: new URLSearchParams(location.search), navigation: navigations };
}

type LinkProps = { href: string; children: ComponentChildren } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href' | 'onClick'>;

/** An ordinary link (so it opens in a new tab with a modifier key) that navigates in place otherwise. */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
