/**
 * The Content-Security-Policy nonce of this page. The server puts a fresh one into every HTML
 * answer (`<meta property="csp-nonce">`, written by Vite's `html.cspNonce`); Mantine's runtime
 * <style> tags carry it, so the policy never needs 'unsafe-inline'. Browsers hide the attribute
 * once the policy applies, but keep the `nonce` property.
 */
export function cspNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? '';
}
