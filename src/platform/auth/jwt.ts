import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';

export interface TokenClaims {
  accountId: number;
  workspaceId: number | null;
}

export interface JwtSettings {
  secret: string | undefined;
  issuer: string;
  audience: string;
  jwksUrl: string | undefined;
}

export class InvalidTokenError extends Error {}

const ASYMMETRIC = ['RS256', 'ES256', 'EdDSA'];
const MAX_ID = 2147483647;

/** Clocks of the issuer and this service may disagree by this much (seconds), no more. */
export const CLOCK_SKEW_SECONDS = 60;
/** The longest lifetime (exp − iat) an access token may have: 30 days. */
export const MAX_TOKEN_LIFETIME_SECONDS = 30 * 86_400;

/**
 * `iat` is required and may not lie in the future beyond the clock skew (a token "issued
 * tomorrow" is forged or from a broken clock), and `exp − iat` is bounded, so a leaked token
 * with `exp` far away is not valid forever.
 */
function checkTimes(payload: JWTPayload, nowSeconds: number): void {
  const { iat, exp } = payload;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new InvalidTokenError('iat is required');
  if (iat > nowSeconds + CLOCK_SKEW_SECONDS) throw new InvalidTokenError('iat is in the future');
  if (typeof exp !== 'number' || exp - iat > MAX_TOKEN_LIFETIME_SECONDS) throw new InvalidTokenError('token lifetime exceeds the maximum');
}

function claimsOf(payload: JWTPayload): TokenClaims {
  const sub = payload.sub;
  // Ids are PostgreSQL integers: anything outside their range cannot name an account or workspace.
  if (typeof sub !== 'string' || !/^[1-9]\d{0,9}$/.test(sub) || Number(sub) > MAX_ID) throw new InvalidTokenError('sub must be an account id');
  const wid = payload.wid;
  if (wid !== undefined && !(Number.isInteger(wid) && (wid as number) > 0 && (wid as number) <= MAX_ID)) {
    throw new InvalidTokenError('wid must be a workspace id');
  }
  return { accountId: Number(sub), workspaceId: (wid as number | undefined) ?? null };
}

/**
 * Verifies bearer tokens. Algorithms are pinned per key source: HS256 for the
 * shared secret, the asymmetric set for the JWKS. `exp` is mandatory.
 */
export function createTokenVerifier(settings: JwtSettings): (token: string) => Promise<TokenClaims> {
  const secret = settings.secret ? new TextEncoder().encode(settings.secret) : undefined;
  const jwks = settings.jwksUrl ? createRemoteJWKSet(new URL(settings.jwksUrl)) : undefined;
  const common = { issuer: settings.issuer, audience: settings.audience, requiredClaims: ['exp', 'iat', 'sub'] };
  const verified = new VerifiedTokens();
  return async (token) => {
    const known = verified.get(token, Date.now());
    if (known) return known;
    return verified.remember(token, await verify(token));
  };

  async function verify(token: string): Promise<TokenClaims & { exp: number }> {
    try {
      let alg: unknown;
      try {
        alg = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')).alg;
      } catch {
        throw new InvalidTokenError('malformed token');
      }
      if (alg === 'HS256' && secret) {
        const { payload } = await jwtVerify(token, secret, { ...common, algorithms: ['HS256'] });
        checkTimes(payload, Math.floor(Date.now() / 1000));
        return { ...claimsOf(payload), exp: payload.exp! };
      }
      if (typeof alg === 'string' && ASYMMETRIC.includes(alg) && jwks) {
        const { payload } = await jwtVerify(token, jwks, { ...common, algorithms: ASYMMETRIC });
        checkTimes(payload, Math.floor(Date.now() / 1000));
        return { ...claimsOf(payload), exp: payload.exp! };
      }
      throw new InvalidTokenError('unsupported token algorithm');
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      if (error instanceof joseErrors.JOSEError) throw new InvalidTokenError(error.code);
      throw error;
    }
  }
}

/** Verified tokens kept per process (the oldest forgotten first). */
export const VERIFIED_TOKENS_KEPT = 10_000;
/** How long a verification is reused at most, however far the token's `exp` is. */
export const VERIFIED_TOKEN_REUSE_MS = 60_000;

/**
 * Tokens this process verified, so a client sending the same token on every request pays the signature check
 * (jose through WebCrypto: about half of the process's CPU on a 50-row list at 1,000,000 customers, profiled in
 * docs/performance-lists.md) once a minute instead. Only a success is kept, and never past the token's `exp`: a JWT
 * is not revocable, so reusing its verification changes no answer (an unknown, expired or forged token is verified,
 * and refused, every time). The tokens live in this process's memory only, as the requests carrying them do; they
 * are never written or logged.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, { claims: TokenClaims; until: number }>();

  get(token: string, now: number): TokenClaims | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.until > now) return entry.claims;
    this.entries.delete(token);
    return undefined;
  }

  remember(token: string, verified: TokenClaims & { exp: number }): TokenClaims {
    const { exp, ...claims } = verified;
    const until = Math.min(exp * 1000, Date.now() + VERIFIED_TOKEN_REUSE_MS);
    this.entries.delete(token);
    this.entries.set(token, { claims, until });
    if (this.entries.size > VERIFIED_TOKENS_KEPT) this.entries.delete(this.entries.keys().next().value!);
    return claims;
  }
}

export async function signAccessToken(
  settings: Pick<JwtSettings, 'issuer' | 'audience'> & { secret: string },
  claims: { accountId: number; workspaceId: number; ttlSeconds: number },
): Promise<string> {
  return new SignJWT({ wid: claims.workspaceId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(claims.accountId))
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + claims.ttlSeconds)
    .sign(new TextEncoder().encode(settings.secret));
}
