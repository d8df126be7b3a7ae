/**
 * A router in a screenful: the path lives in `location`, links push history entries, and
 * `matchRoute` turns patterns like `/algorithms/:owner/:name/:tab?` into parameters. Enough for
 * a dozen pages, without a dependency.
 */
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
  // A new page starts at the top, as it would after a real navigation.
  if (!opts.replace) window.scrollTo(0, 0);
}

/** The current path and query, re-rendering the caller when they change. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((t) => t + 1);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** `/a/:x/:y?` against `/a/1` → `{x: '1'}`; a trailing `*` param takes the rest of the path. */
export function matchRoute(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i];
    if (w === '*') {
      params['*'] = got.slice(i).map(decodeURIComponent).join('/');
      return params;
    }
    if (w.startsWith(':')) {
      const optional = w.endsWith('?');
      if (g === undefined) {
        if (optional) continue;
        return null;
      }
      params[w.slice(1, optional ? -1 : undefined)] = decodeURIComponent(g);
    } else if (w !== g) return null;
  }
  return got.length <= want.length ? params : null;
}

type LinkProps = AnchorHTMLAttributes & { href: string; children?: ComponentChildren };

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
