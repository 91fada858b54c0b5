import { api } from '../../api/client';

/**
 * The workspace the console acts in. A console session belongs to an account, not a workspace:
 * every developer request names the workspace with `X-Workspace-Id` (a member of one workspace may
 * leave it out, a member of several must send it). The choice is remembered for new tabs
 * (localStorage) and kept per tab once made (sessionStorage, and this module's copy), so two tabs
 * may work in two workspaces.
 */
const REMEMBERED = 'patchbay.console.workspace';

function stored(): number | null {
  const raw = sessionStorage.getItem(REMEMBERED) ?? localStorage.getItem(REMEMBERED);
  const id = raw === null ? NaN : Number(raw);
  return Number.isInteger(id) && id > 0 ? id : null;
}

let selected: number | null = stored();

export const selectedWorkspace = {
  get: (): number | null => selected,
  set: (id: number) => {
    selected = id;
    sessionStorage.setItem(REMEMBERED, String(id));
    localStorage.setItem(REMEMBERED, String(id));
  },
  /** Forgets a choice the API no longer accepts (the member left that workspace) or that belonged to another account. */
  clear: () => {
    selected = null;
    sessionStorage.removeItem(REMEMBERED);
    localStorage.removeItem(REMEMBERED);
  },
};

/** Adds `X-Workspace-Id` to every developer request of this app (the typed client's middleware). */
export function sendSelectedWorkspace(): void {
  api.use({
    onRequest({ request }) {
      if (selected !== null && new URL(request.url, window.location.origin).pathname.startsWith('/api/developer/')) {
        request.headers.set('X-Workspace-Id', String(selected));
      }
      return request;
    },
  });
}
