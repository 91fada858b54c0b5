// One rule for everything that reaches a log (request lines, error messages and stacks, job
// errors): a value that is a credential, or can be personal, is replaced by `[redacted]`.
//   - query parameters named like a credential (`signature`, `token`, `*_token`, `secret`,
//     `password`, S3 presigned parts) or like personal data (`search`, `email`, `q`, names);
//   - path segments that a route declares as a credential by naming its parameter so
//     (`/invitations/:token`): learnt from the routes as they are registered, so a new route with
//     a `:token` segment is redacted without anyone remembering to add it;
//   - tokens with one of the service's prefixes wherever they appear in text.

export const REDACTED = '[redacted]';

const normalise = (name: string) => name.toLowerCase().replace(/[_-]/g, '');
const CREDENTIAL_NAME = /^(signature|sig|secret|password|xamz(signature|credential|securitytoken)|[a-z]*token)$/;
const PERSONAL_NAME = /^(search|email|q|name|firstname|lastname)$/;

/** A parameter (query or path) whose value is a credential. */
export const isCredentialName = (name: string) => CREDENTIAL_NAME.test(normalise(name));
const isRedactedName = (name: string) => isCredentialName(name) || PERSONAL_NAME.test(normalise(name));

// Sign-in links, portal sessions, sandbox onboarding, product keys, console sign-in links and sessions, API tokens,
// buyers' sign-in links and sessions, and a Stripe webhook secret pasted where it does not belong.
const PREFIXED_TOKEN = /\b(psl_|pps_|sbo_|pk_(?:live|test)_|dsl_|pds_|pat_|pcl_|pcs_|whsec_)[A-Za-z0-9_-]{16,}/g;

const SEGMENT = `[^/?#\\s"'<>]+`;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface SecretRoute {
  /** Every segment captured, in order. */
  anchored: RegExp;
  anywhere: RegExp;
  segments: string[];
}

const secretRoutes = new Map<string, SecretRoute>();
// Static segments under each route prefix (parameters written `:`): `/invitations/accept` is a
// route of its own, not a token in the place of `/invitations/:token`.
const staticChildren = new Map<string, Set<string>>();
const parentKey = (segments: string[], position: number) => segments.slice(0, position).map((s) => (s.startsWith(':') ? ':' : s)).join('/');

/** Learns a registered route: its static segments, and its credential parameters if it has any. */
export function noteRoute(url: string): void {
  if (url.includes('*') || secretRoutes.has(url)) return;
  const segments = url.split('/').slice(1);
  segments.forEach((segment, i) => {
    if (segment.startsWith(':')) return;
    const key = parentKey(segments, i);
    const children = staticChildren.get(key) ?? new Set<string>();
    children.add(segment);
    staticChildren.set(key, children);
  });
  let last = segments.length - 1;
  while (last >= 0 && !(segments[last]!.startsWith(':') && isCredentialName(segments[last]!.slice(1)))) last -= 1;
  if (last < 0) return;
  const upTo = segments.slice(0, last + 1);
  const source = upTo.map((s) => `/(${s.startsWith(':') ? SEGMENT : escape(s)})`).join('');
  secretRoutes.set(url, { anchored: new RegExp(`^${source}`), anywhere: new RegExp(source, 'g'), segments: upTo });
}

function rebuild(route: SecretRoute, values: string[]): string {
  return values
    .map((value, i) => {
      const segment = route.segments[i]!;
      const secret = segment.startsWith(':') && isCredentialName(segment.slice(1));
      return secret && !staticChildren.get(parentKey(route.segments, i))?.has(value) ? `/${REDACTED}` : `/${value}`;
    })
    .join('');
}

function redactPath(path: string, routeUrl: string | undefined): string {
  // A matched route decides alone; an unmatched URL is checked against every credential route.
  const candidates = routeUrl !== undefined ? [secretRoutes.get(routeUrl)].filter((r) => r !== undefined) : [...secretRoutes.values()];
  for (const route of candidates) {
    const match = route.anchored.exec(path);
    if (match) return rebuild(route, match.slice(1)) + path.slice(match[0].length);
  }
  return path;
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return isRedactedName(decoded) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
}

/**
 * A request URL (path and query) as it may be logged. `routeUrl` is the matched route's pattern
 * (`request.routeOptions.url`); without it the URL is checked against every credential route.
 */
export function redactUrl(rawUrl: string, routeUrl?: string): string {
  const mark = rawUrl.indexOf('?');
  const path = redactPath(mark < 0 ? rawUrl : rawUrl.slice(0, mark), routeUrl);
  const url = mark < 0 ? path : `${path}?${redactQuery(rawUrl.slice(mark + 1))}`;
  return url.replace(PREFIXED_TOKEN, `$1${REDACTED}`);
}

// In prose a value ends at punctuation too; the service's credentials never contain any.
const PARAM_IN_TEXT = /([?&#;])([A-Za-z0-9_.%-]+)=([^&#\s"'<>,;)\]]*)/g;

/** Free text (an error message, a stack, a job's last error) with every URL-borne or prefixed credential redacted. */
export function redactText(text: string): string {
  let out = text.replace(PARAM_IN_TEXT, (whole, mark: string, name: string) => (isRedactedName(name) ? `${mark}${name}=${REDACTED}` : whole));
  for (const route of secretRoutes.values()) {
    route.anywhere.lastIndex = 0;
    out = out.replace(route.anywhere, (...match: unknown[]) => rebuild(route, match.slice(1, route.segments.length + 1) as string[]));
  }
  return out.replace(PREFIXED_TOKEN, `$1${REDACTED}`);
}
