import { SignJWT } from 'jose';
import type { SigningKey } from './licensing.keys.js';

export const LICENSE_TOKEN_TYPE = 'license+jwt';
export const LICENSE_ISSUER = 'patchbay';

export interface LicenseClaims {
  productAppId: string;
  serialId: number;
  serial: string;
  machineId: string;
  activationId: number;
  expiresAt: Date;
  nonce: string | null;
}

/**
 * A compact JWS (EdDSA/Ed25519) binding product, serial, machine and an
 * offline-grace expiry. The plugin verifies it with the workspace's public key
 * and keeps working offline until `exp`.
 */
export function signLicenseToken(key: SigningKey, claims: LicenseClaims, now = new Date()): Promise<string> {
  return new SignJWT({
    ser: claims.serial,
    sid: claims.serialId,
    mid: claims.machineId,
    act: claims.activationId,
    ...(claims.nonce ? { nonce: claims.nonce } : {}),
  })
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: LICENSE_TOKEN_TYPE })
    .setIssuer(LICENSE_ISSUER)
    .setAudience(claims.productAppId)
    .setSubject(`serial:${claims.serialId}`)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
    .sign(key.privateKey);
}
