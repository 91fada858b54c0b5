import { createHash, randomBytes } from 'node:crypto';
import type { Scope } from '../../platform/auth/scope.js';
import { seal, unseal } from '../../platform/crypto/sealed.js';
import type { Db } from '../../platform/db/database.js';
import type { ProductEnvironment } from '../../platform/db/schema.js';
import { type Executor, inTransaction } from '../../platform/db/transaction.js';
import { randomSymbols } from '../../platform/ids/codes.js';
import * as repo from './product-credentials.repo.js';
import type { ProductRecord } from './products.repo.js';

export const ENVIRONMENTS: readonly ProductEnvironment[] = ['live', 'test'];

/** The hash under which a product key is looked up (the key itself is never stored in clear). */
export const productKeyHash = (key: string) => createHash('sha256').update(key).digest('hex');

/** `pk_live_…abcd`: enough to recognise a key, never enough to use it. */
const previewOf = (key: string) => `${key.slice(0, 8)}…${key.slice(-4)}`;

export interface CredentialState {
  credential: repo.CredentialRecord | null;
  key: repo.KeyRecord | null;
  /** The credential or its key was made by this call. */
  created: boolean;
  /** The key's secret cannot be recovered (sealed under a key-encryption key that is no longer configured): rotate deliberately. */
  rotationRequired: boolean;
}

/**
 * Product credentials: per product and environment, the public appId and a secret product key
 * that plugin packages embed. The key is made here, sealed (AES-256-GCM under the service's
 * key-encryption key, so the next package can embed it again), looked up by its hash, and never
 * returned by any route. Missing credentials are created on demand, race-free.
 */
export class ProductCredentials {
  private readonly kekId: string;

  constructor(
    private readonly db: Db,
    private readonly encryptionKey: Buffer,
  ) {
    this.kekId = createHash('sha256').update(encryptionKey).digest('hex').slice(0, 16);
  }

  /** Reads the credential without creating anything (callers without credentials access get nothing). */
  async read(scope: Scope, productId: number, environment: ProductEnvironment): Promise<CredentialState> {
    const credential = (await repo.findCredential(this.db, scope, productId, environment)) ?? null;
    const key = credential ? ((await repo.activeKey(this.db, scope, credential.id)) ?? null) : null;
    return { credential, key, created: false, rotationRequired: key !== null && !this.recoverable(key) };
  }

  /**
   * The credential and its active key, created when missing. Concurrent first calls create one
   * (unique constraints decide; the loser reads the winner's). An unrecoverable key is reported,
   * never replaced here.
   */
  async ensure(
    db: Executor,
    scope: Scope,
    product: Pick<ProductRecord, 'id' | 'app_id'>,
    environment: ProductEnvironment,
    /** What the caller already read with `findCredentialWithKey`'s columns (null: nothing); read here when not given. */
    known?: { credential: repo.CredentialRecord; key: repo.KeyRecord | null } | null,
  ): Promise<CredentialState> {
    // Almost always both exist: one read, no transaction (a dashboard view used to pay a 7-statement transaction).
    const found = known !== undefined ? known : await repo.findCredentialWithKey(db, scope, product.id, environment);
    if (found?.key) return { credential: found.credential, key: found.key, created: false, rotationRequired: !this.recoverable(found.key) };
    return inTransaction(db, async (tx) => {
      const appId = environment === 'live' ? product.app_id : `app_test_${randomSymbols(20).toLowerCase()}`;
      const { credential, created } = await repo.ensureCredential(tx, scope, product.id, environment, appId);
      let key = await repo.activeKey(tx, scope, credential.id);
      let keyCreated = false;
      if (!key) {
        keyCreated = await repo.insertActiveKey(tx, scope, this.newKey(credential.id, environment));
        key = await repo.activeKey(tx, scope, credential.id);
      }
      if (!key) throw new Error('product key missing after creation');
      return { credential, key, created: created || keyCreated, rotationRequired: !this.recoverable(key) };
    });
  }

  /** The product key in clear, for embedding in a package (never for an API answer). Null when it cannot be recovered. */
  reveal(key: repo.KeyRecord): string | null {
    if (!this.recoverable(key)) return null;
    try {
      return unseal(this.encryptionKey, key.key_sealed, `product-key:${key.credential_id}:${key.key_hash}`).toString('utf8');
    } catch {
      return null;
    }
  }

  /** Replaces the active key: the old one is accepted until `overlapUntil`. Returns the new key's state. */
  async rotate(db: Executor, scope: Scope, credentialId: number, environment: ProductEnvironment, overlapUntil: Date): Promise<repo.KeyRecord> {
    return inTransaction(db, async (tx) => {
      await repo.retireActiveKey(tx, scope, credentialId, overlapUntil);
      await repo.insertActiveKey(tx, scope, this.newKey(credentialId, environment));
      const key = await repo.activeKey(tx, scope, credentialId);
      if (!key) throw new Error('product key missing after rotation');
      return key;
    });
  }

  preview(key: repo.KeyRecord | null): string | null {
    return key?.preview ?? null;
  }

  private recoverable(key: repo.KeyRecord): boolean {
    return key.sealed_with === this.kekId;
  }

  private newKey(credentialId: number, environment: ProductEnvironment) {
    const key = `pk_${environment}_${randomBytes(32).toString('base64url')}`;
    const keyHash = productKeyHash(key);
    return {
      credentialId,
      keyHash,
      sealed: seal(this.encryptionKey, Buffer.from(key, 'utf8'), `product-key:${credentialId}:${keyHash}`),
      sealedWith: this.kekId,
      preview: previewOf(key),
    };
  }
}

/** For the licensing runtime: which credential a product key belongs to (null: unknown or revoked). */
export const keyForRuntime = (db: Executor, key: string) => repo.keyForRuntime(db, productKeyHash(key));

/** For the licensing runtime: records when credentials were last used, many at once. */
export const touchCredentials = (db: Executor, touches: Array<{ credentialId: number; request: Date | null; plugin: Date | null }>) =>
  repo.touchCredentials(db, touches);
