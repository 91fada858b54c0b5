/** The async functions of a module, callable before the module is loaded. */
export type LazyModule<M> = {
  [K in keyof M as M[K] extends (...args: never[]) => Promise<unknown> ? K : never]: M[K];
};

/**
 * A module loaded on first use. The CLI lists every command in one table, but each run needs the use cases of one;
 * importing them all up front cost most of `patchbay --help`'s start-up. Loading starts when a function is looked up,
 * which in `lazy.fn(await ctx.db(), …)` is before the database opens, so the module loads while the embedded
 * database starts in its worker thread.
 */
export function lazy<M extends object>(load: () => Promise<M>): LazyModule<M> {
  let loading: Promise<M> | undefined;
  return new Proxy({} as LazyModule<M>, {
    get(_target, name) {
      // Not a promise: `await` on the module object itself must not call into it.
      if (name === 'then') return undefined;
      if (!loading) {
        loading = load();
        // Awaited when the function is called (after the database opened); until then a failure is not unhandled.
        loading.catch(() => undefined);
      }
      return async (...args: unknown[]) => {
        const fn = (await loading!)[name as keyof M];
        if (typeof fn !== 'function') throw new TypeError(`${String(name)} is not a function of the lazily loaded module`);
        return (fn as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}
