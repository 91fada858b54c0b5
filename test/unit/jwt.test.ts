import { generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTokenVerifier, InvalidTokenError, signAccessToken, type JwtSettings } from '../../src/platform/auth/jwt.js';

const SETTINGS: JwtSettings = {
  secret: 'unit-test-secret-unit-test-secret-0123456789',
  issuer: 'patchbay',
  audience: 'patchbay-api',
  jwksUrl: undefined,
};
const verify = createTokenVerifier(SETTINGS);
const key = (secret = SETTINGS.secret!) => new TextEncoder().encode(secret);
const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** An HS256 token with the usual claims, any of which `overrides` can replace or (with undefined) drop. */
async function token(overrides: Partial<Record<'sub' | 'iss' | 'aud' | 'exp' | 'nbf' | 'wid' | 'iat', unknown>> = {}, secret?: string): Promise<string> {
  const claims: Record<string, unknown> = { sub: '12', wid: 34, iss: SETTINGS.issuer, aud: SETTINGS.audience, iat: now(), exp: now() + 600, ...overrides };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key(secret));
}

async function rejection(candidate: string, verifier = verify): Promise<InvalidTokenError> {
  try {
    await verifier(candidate);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidTokenError);
    return error as InvalidTokenError;
  }
  throw new Error('the token was accepted');
}

describe('createTokenVerifier (HS256 secret)', () => {
  it('accepts a token from signAccessToken', async () => {
    const signed = await signAccessToken({ secret: SETTINGS.secret!, issuer: SETTINGS.issuer, audience: SETTINGS.audience }, { accountId: 12, workspaceId: 34, ttlSeconds: 60 });
    await expect(verify(signed)).resolves.toEqual({ accountId: 12, workspaceId: 34 });
  });

  it('accepts an iat within the clock skew and a lifetime of exactly 30 days', async () => {
    await expect(verify(await token({ iat: now() + 30 }))).resolves.toMatchObject({ accountId: 12 });
    await expect(verify(await token({ iat: now(), exp: now() + 30 * 86_400 }))).resolves.toMatchObject({ accountId: 12 });
  });

  it('accepts a token without a workspace (chosen per request)', async () => {
    await expect(verify(await token({ wid: undefined }))).resolves.toEqual({ accountId: 12, workspaceId: null });
  });

  it('accepts the largest ten-digit account id in range', async () => {
    await expect(verify(await token({ sub: '2147483647' }))).resolves.toMatchObject({ accountId: 2147483647 });
  });

  it.each([
    {
      label: 'alg none',
      make: async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: '12', wid: 34, iss: 'patchbay', aud: 'patchbay-api', exp: now() + 600 })}.`,
    },
    {
      label: 'alg None (case variant)',
      make: async () => `${b64({ alg: 'None' })}.${b64({ sub: '12', iss: 'patchbay', aud: 'patchbay-api', exp: now() + 600 })}.`,
    },
    { label: 'the wrong secret', make: () => token({}, 'another-secret-another-secret-0123456789') },
    {
      label: 'a tampered payload',
      make: async () => {
        const [header, , signature] = (await token()).split('.');
        return `${header}.${b64({ sub: '1', wid: 1, iss: 'patchbay', aud: 'patchbay-api', exp: now() + 600 })}.${signature}`;
      },
    },
    { label: 'an expired token', make: () => token({ exp: now() - 10 }) },
    { label: 'no exp', make: () => token({ exp: undefined }) },
    { label: 'a token not valid yet (nbf)', make: () => token({ nbf: now() + 600 }) },
    { label: 'the wrong issuer', make: () => token({ iss: 'someone-else' }) },
    { label: 'no issuer', make: () => token({ iss: undefined }) },
    { label: 'the wrong audience', make: () => token({ aud: 'another-api' }) },
    { label: 'no audience', make: () => token({ aud: undefined }) },
    { label: 'no sub', make: () => token({ sub: undefined }) },
    { label: 'a non-numeric sub', make: () => token({ sub: 'ann@example.com' }) },
    { label: 'sub 0', make: () => token({ sub: '0' }) },
    { label: 'a negative sub', make: () => token({ sub: '-1' }) },
    { label: 'a sub with leading zeros', make: () => token({ sub: '012' }) },
    { label: 'a sub with eleven digits', make: () => token({ sub: '12345678901' }) },
    { label: 'a fractional sub', make: () => token({ sub: '1.5' }) },
    { label: 'a wid as text', make: () => token({ wid: '34' }) },
    { label: 'wid 0', make: () => token({ wid: 0 }) },
    { label: 'a fractional wid', make: () => token({ wid: 1.5 }) },
    { label: 'a null wid', make: () => token({ wid: null }) },
    { label: 'no iat', make: () => token({ iat: undefined }) },
    { label: 'an iat one day in the future', make: () => token({ iat: now() + 86_400, exp: now() + 86_400 + 600 }) },
    { label: 'an iat beyond the 60 s clock skew', make: () => token({ iat: now() + 120 }) },
    { label: 'an exp of 1e308', make: () => token({ exp: 1e308 }) },
    { label: 'a lifetime just over 30 days', make: () => token({ iat: now(), exp: now() + 30 * 86_400 + 1 }) },
  ])('refuses $label', async ({ make }) => {
    await rejection(await make());
  });

  it.each([
    { label: 'an empty string', value: '' },
    { label: 'one segment', value: 'abc' },
    { label: 'three junk segments', value: 'a.b.c' },
    { label: 'a header that is not JSON', value: `${b64('not json')}.${b64({ sub: '1' })}.sig` },
    { label: 'a header that is JSON null', value: `${b64('null')}.${b64({ sub: '1' })}.sig` },
    { label: 'two segments', value: `${b64({ alg: 'HS256' })}.${b64({ sub: '1' })}` },
  ])('refuses a malformed token: $label', async ({ value }) => {
    await rejection(value);
  });

  it('refuses other HMAC algorithms', async () => {
    const hs384 = await new SignJWT({ sub: '12', iss: SETTINGS.issuer, aud: SETTINGS.audience })
      .setProtectedHeader({ alg: 'HS384' })
      .setExpirationTime('10m')
      .sign(key());
    expect((await rejection(hs384)).message).toBe('unsupported token algorithm');
  });

  it('refuses asymmetric tokens when no JWKS is configured', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const es256 = await new SignJWT({ sub: '12', iss: SETTINGS.issuer, aud: SETTINGS.audience })
      .setProtectedHeader({ alg: 'ES256' })
      .setExpirationTime('10m')
      .sign(privateKey);
    expect((await rejection(es256)).message).toBe('unsupported token algorithm');
  });

  it('refuses HS256 tokens when only a JWKS is configured', async () => {
    const jwksOnly = createTokenVerifier({ ...SETTINGS, secret: undefined, jwksUrl: 'https://id.example/jwks.json' });
    expect((await rejection(await token(), jwksOnly)).message).toBe('unsupported token algorithm');
  });

  it('checks the issuer and audience it was configured with', async () => {
    const custom = createTokenVerifier({ ...SETTINGS, issuer: 'https://id.example', audience: 'commerce' });
    await rejection(await token(), custom);
    await expect(custom(await token({ iss: 'https://id.example', aud: 'commerce' }))).resolves.toEqual({ accountId: 12, workspaceId: 34 });
  });

  // Ids are PostgreSQL `integer`s. A validly signed token whose sub or wid is
  // beyond 2147483647 passes verification and then fails the membership query
  // with SQLSTATE 22003, which the error handler answers with a 500 instead of
  // a 401. See the report: claimsOf in src/platform/auth/jwt.ts.
  it('refuses a sub beyond the integer id range', async () => {
    await rejection(await token({ sub: '2147483648' }));
  });

  it('refuses a wid beyond the integer id range', async () => {
    await rejection(await token({ wid: 2147483648 }));
  });
});

describe('createTokenVerifier: a verified token is reused, never past its exp', () => {
  afterEach(() => vi.useRealTimers());

  it('answers the same claims for the same token, refuses it once expired, and never keeps a refusal', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T12:00:00Z'));
    const fresh = createTokenVerifier(SETTINGS);
    const short = await token({ exp: now() + 5 });
    await expect(fresh(short)).resolves.toEqual({ accountId: 12, workspaceId: 34 });
    await expect(fresh(short)).resolves.toEqual({ accountId: 12, workspaceId: 34 });
    vi.setSystemTime(new Date('2026-11-25T12:00:06Z'));
    expect((await rejection(short, fresh)).message).toBe('ERR_JWT_EXPIRED');

    // A forged token is refused each time, also right after its genuine twin was accepted.
    const genuine = await token();
    await expect(fresh(genuine)).resolves.toMatchObject({ accountId: 12 });
    const forged = await token({}, 'another-secret-another-secret-0123456789');
    await rejection(forged, fresh);
    await rejection(forged, fresh);
  });
});

describe('signAccessToken', () => {
  it('signs HS256 with sub, wid, iss, aud, iat and exp = iat + ttl', async () => {
    const signed = await signAccessToken({ secret: SETTINGS.secret!, issuer: 'iss-x', audience: 'aud-y' }, { accountId: 5, workspaceId: 6, ttlSeconds: 90 });
    const [header, payload] = signed.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part!, 'base64url').toString('utf8')));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ sub: '5', wid: 6, iss: 'iss-x', aud: 'aud-y' });
    expect(payload.exp - payload.iat).toBe(90);
  });
});
