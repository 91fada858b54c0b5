import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';

/** The filters of a list: each name with its default. The URL holds only values that differ from it. */
export type ListSpec = Record<string, string | number>;
type Values<S extends ListSpec> = { [K in keyof S]: S[K] extends number ? number : string };

/**
 * A list's page and filters live in the URL's query, so every view is a link that can be shared,
 * reloaded and reached with the back button. Changing a filter goes back to page 1; each change
 * is a history entry.
 */
export function useListParams<S extends ListSpec>(spec: S & { page?: number }) {
  const [search, setSearch] = useSearchParams();
  const values = useMemo(() => {
    const out: Record<string, string | number> = {};
    for (const [name, fallback] of Object.entries(spec)) {
      const raw = search.get(name);
      if (typeof fallback === 'number') {
        const n = raw === null ? NaN : Number(raw);
        out[name] = Number.isInteger(n) && n >= 1 ? n : fallback;
      } else {
        out[name] = raw ?? fallback;
      }
    }
    return out as Values<S>;
    // The spec is a literal at the call site; its identity changes every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [search]);

  const update = useCallback(
    (patch: Partial<Values<S>>) => {
      setSearch(() => {
        // The address bar, not the router's render-time copy: two changes in quick succession (a search box's delayed
        // update right after a filter was picked) must each start from the other's result, not undo it.
        const next = new URLSearchParams(window.location.search);
        for (const [name, value] of Object.entries(patch)) {
          if (value === undefined || value === '' || value === spec[name]) next.delete(name);
          else next.set(name, String(value));
        }
        if (!('page' in patch)) next.delete('page');
        return next;
      });
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [setSearch],
  );
  return [values, update] as const;
}
