/**
 * Where a developer was headed when the console asked them to sign in (a deep link, an expired
 * session). Kept in localStorage because the e-mailed sign-in link usually opens in a new tab; a
 * path inside the console and nothing else, so a crafted value cannot send anyone elsewhere.
 */
const AFTER_SIGN_IN = 'patchbay.console.after-sign-in';

const inside = (path: string | null | undefined): path is string =>
  typeof path === 'string' && path.startsWith('/') && !path.startsWith('//') && !path.startsWith('/sign-in');

export const afterSignIn = {
  remember: (path: string | undefined) => {
    if (inside(path)) localStorage.setItem(AFTER_SIGN_IN, path);
  },
  take: (): string | null => {
    const path = localStorage.getItem(AFTER_SIGN_IN);
    localStorage.removeItem(AFTER_SIGN_IN);
    return inside(path) ? path : null;
  },
};
