import { useEffect, useRef } from 'react';

/**
 * Secrets that links carry in the URL fragment (`#token=…`): the fragment never reaches a server,
 * a log line or a Referer, and this module takes it out of the address bar as soon as the app
 * starts, or the moment it changes (a link pasted into a tab already showing that page is a
 * same-document navigation), before the router or anything else reads the URL. Pages take each
 * value once.
 */
const captured = new Map<string, string>();
const listeners = new Set<() => void>();
let watched: readonly string[] = [];

function capture(): boolean {
  const hash = window.location.hash.slice(1);
  if (!hash) return false;
  const params = new URLSearchParams(hash);
  let changed = false;
  for (const name of watched) {
    const value = params.get(name);
    if (value === null) continue;
    captured.set(name, value);
    params.delete(name);
    changed = true;
  }
  if (!changed) return false;
  const rest = params.toString();
  window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.search}${rest ? `#${rest}` : ''}`);
  return true;
}

/** Called once at start-up with the names of the secrets this app's links carry. */
export function captureFragment(names: readonly string[]): void {
  watched = names;
  capture();
  window.addEventListener('hashchange', () => {
    if (capture()) for (const listener of listeners) listener();
  });
}

/** The captured value, handed out once (a sign-in link works once; asking twice must not reuse it). */
export function takeCaptured(name: string): string | null {
  const value = captured.get(name) ?? null;
  captured.delete(name);
  return value;
}

/** Whether a value was captured (and not taken yet); reads nothing out. */
export function hasCaptured(name: string): boolean {
  return captured.has(name);
}

/** Calls `onValue` with the fragment's `name` once when the page mounts, and again whenever a new link brings one. */
export function useFragmentValue(name: string, onValue: (value: string) => void): void {
  const callback = useRef(onValue);
  callback.current = onValue;
  useEffect(() => {
    const take = () => {
      const value = takeCaptured(name);
      if (value) callback.current(value);
    };
    take();
    listeners.add(take);
    return () => {
      listeners.delete(take);
    };
  }, [name]);
}
