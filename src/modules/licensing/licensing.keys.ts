import { generateKeyPairSync, createPrivateKey, type KeyObject } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import { seal, unseal } from '../../platform/crypto/sealed.js';
import { randomSymbols } from '../../platform/ids/codes.js';
import * as repo from './licensing.keys.repo.js';

const KEY_CACHE_MS = 60_000;

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
  status?: string;
}

/**
 * Per-workspace Ed25519 license signing keys. Private keys are created here,
 * sealed with the configured key-encryption key before they touch the
 * database, and only ever held decrypted in this process's memory. Public
 * keys are published as a JWKS; `kid` lets plugins pick the right one after
 * a rotation.
 */
export class LicenseKeyring {
  // Re-read after a minute so a rotation made by another instance takes effect everywhere.
  private readonly active = new Map<number, SigningKey & { until: number }>();

  constructor(
    private readonly db: Db,
    private readonly encryptionKey: Buffer,
  ) {}

  async signingKey(workspaceId: number): Promise<SigningKey> {
    const cached = this.active.get(workspaceId);
    if (cached && cached.until > Date.now()) return cached;
    let row = await repo.activeKey(this.db, workspaceId);
    if (!row) {
      await this.create(workspaceId);
      row = await repo.activeKey(this.db, workspaceId);
    }
    if (!row) throw new Error('license signing key missing after creation');
    const pem = unseal(this.encryptionKey, row.private_key_encrypted, `license-key:${row.kid}`);
    const key = { kid: row.kid, privateKey: createPrivateKey({ key: pem, format: 'pem' }), until: Date.now() + KEY_CACHE_MS };
    this.active.set(workspaceId, key);
    return key;
  }

  async publicKeys(workspaceId: number): Promise<PublicJwk[]> {
    await this.signingKey(workspaceId);
    const rows = await repo.publicKeys(this.db, workspaceId);
    return rows.map((r) => r.public_jwk as unknown as PublicJwk);
  }

  /** Retires the active key and creates a new one; tokens signed by the old key keep verifying via the JWKS. */
  async rotate(workspaceId: number): Promise<string> {
    await repo.retireActiveKey(this.db, workspaceId);
    this.active.delete(workspaceId);
    return (await this.signingKey(workspaceId)).kid;
  }

  private async create(workspaceId: number): Promise<void> {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const kid = `lk_${randomSymbols(16).toLowerCase()}`;
    const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
    const publicJwk: PublicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, alg: 'EdDSA', use: 'sig' };
    const sealed = seal(this.encryptionKey, Buffer.from(privateKey.export({ format: 'pem', type: 'pkcs8' }) as string), `license-key:${kid}`);
    await repo.insertActiveKey(this.db, workspaceId, { kid, publicJwk, sealedPrivateKey: sealed });
  }
}
