/**
 * The invitation a partner opened in this tab, kept while they sign in (sessionStorage: this tab
 * only, gone when it closes). The token is never put into a URL.
 */
const PENDING_INVITATION = 'patchbay.partner-portal.invitation';

export const pendingInvitation = {
  get: (): string | null => sessionStorage.getItem(PENDING_INVITATION),
  set: (token: string) => sessionStorage.setItem(PENDING_INVITATION, token),
  clear: () => sessionStorage.removeItem(PENDING_INVITATION),
};

/**
 * Where a partner was headed when the portal asked them to sign in (a deep link, an expired
 * session). Kept in localStorage, because the e-mailed sign-in link usually opens in a new tab;
 * a path inside the portal and nothing else.
 */
const AFTER_SIGN_IN = 'patchbay.partner-portal.after-sign-in';

export const afterSignIn = {
  remember: (path: string) => {
    if (path.startsWith('/') && !path.startsWith('//') && !path.startsWith('/sign-in')) localStorage.setItem(AFTER_SIGN_IN, path);
  },
  take: (): string | null => {
    const path = localStorage.getItem(AFTER_SIGN_IN);
    localStorage.removeItem(AFTER_SIGN_IN);
    return path?.startsWith('/') && !path.startsWith('//') ? path : null;
  },
};
