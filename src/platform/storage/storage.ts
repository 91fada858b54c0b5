import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, defineErrors, type CodesOf, type ErrorSpec } from '../http/errors.js';

const storageErrorSpecs = {
  PRIVATE_PACKAGE_STORAGE_REQUIRED: { status: 503, title: 'Private storage is not configured or not reachable', description: 'private storage is not configured or not reachable; files and packages are never served from a public fallback' },
  FILE_TOO_LARGE: { status: 413, title: 'The file exceeds the upload limit', description: 'a delivery file over `FILE_UPLOAD_MAX_BYTES`; nothing was kept' },
} as const satisfies Record<string, ErrorSpec>;
export const StorageErrors = defineErrors(storageErrorSpecs);

declare module '../http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof storageErrorSpecs> {}
}

export interface StoredObject {
  size: number;
  sha256: string;
}

/**
 * Private storage for delivery files and plugin packages. Never public: objects are read only
 * through this service (a signed, expiring link). Package and file modules do not know which
 * backend they use.
 */
export interface PrivateStorage {
  readonly name: string;
  /** Streams `body` into `key`, counting and hashing it; refuses more than `maxBytes` (nothing is kept then). */
  put(key: string, body: Readable, options: { contentType?: string; maxBytes?: number }): Promise<StoredObject>;
  get(key: string): Promise<Readable>;
  stat(key: string): Promise<{ size: number } | null>;
  delete(key: string): Promise<void>;
  /** Throws when the backend cannot be used right now. */
  check(): Promise<void>;
}

export class StorageUnavailableError extends Error {}

/** Counts and hashes what passes through; fails past `maxBytes`. */
function meter(maxBytes: number | undefined) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (maxBytes !== undefined && size > maxBytes) {
        callback(new AppError(StorageErrors.FILE_TOO_LARGE, `The file exceeds ${maxBytes} bytes`));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  return { stream, result: (): StoredObject => ({ size, sha256: hash.digest('hex') }) };
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._\-/]{0,500}$/;
function checkKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`unsafe storage key ${key}`);
}

/** A directory on this machine (the embedded default: DATA_DIR/storage). One instance only. */
export class LocalStorage implements PrivateStorage {
  readonly name = 'local';
  constructor(private readonly root: string) {}

  private file(key: string): string {
    checkKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable, options: { maxBytes?: number }): Promise<StoredObject> {
    const target = this.file(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    // Written aside and renamed into place: a reader never sees half a file.
    const partial = `${target}.partial-${process.pid}-${Date.now()}`;
    const metered = meter(options.maxBytes);
    try {
      await pipeline(body, metered.stream, createWriteStream(partial, { mode: 0o600 }));
      await fs.rename(partial, target);
    } catch (error) {
      await fs.rm(partial, { force: true });
      throw error;
    }
    return metered.result();
  }

  async get(key: string): Promise<Readable> {
    const stream = createReadStream(this.file(key), { highWaterMark: 256 * 1024 });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      return { size: (await fs.stat(this.file(key))).size };
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  async check(): Promise<void> {
    try {
      await fs.mkdir(this.root, { recursive: true });
      await fs.access(this.root, fs.constants.W_OK);
    } catch (error) {
      throw new StorageUnavailableError(`the storage directory is not writable: ${(error as Error).message}`);
    }
  }
}

export interface S3Settings {
  bucket: string;
  endpoint?: string | undefined;
  region: string;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  /** Path-style URLs (most S3-compatible servers; AWS uses virtual-hosted style). */
  forcePathStyle: boolean;
  /** Key prefix inside the bucket. */
  prefix: string;
}

/** An S3-compatible bucket (AWS S3, MinIO, R2, …) through the AWS SDK; objects stay private. */
export class S3Storage implements PrivateStorage {
  readonly name = 's3';
  private client: Promise<import('@aws-sdk/client-s3').S3Client> | undefined;

  constructor(private readonly settings: S3Settings) {}

  private async s3() {
    // The SDK warns once that its releases after January 2027 need Node 22; the locked release supports Node 20.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client ??= import('@aws-sdk/client-s3').then(
      ({ S3Client }) =>
        new S3Client({
          region: this.settings.region,
          forcePathStyle: this.settings.forcePathStyle,
          maxAttempts: 2,
          ...(this.settings.endpoint ? { endpoint: this.settings.endpoint } : {}),
          ...(this.settings.accessKeyId && this.settings.secretAccessKey
            ? { credentials: { accessKeyId: this.settings.accessKeyId, secretAccessKey: this.settings.secretAccessKey } }
            : {}),
        }),
    );
    return this.client;
  }

  private key(key: string): string {
    checkKey(key);
    return `${this.settings.prefix}${key}`;
  }

  async put(key: string, body: Readable, options: { contentType?: string; maxBytes?: number }): Promise<StoredObject> {
    const client = await this.s3();
    const { Upload } = await import('@aws-sdk/lib-storage');
    const metered = meter(options.maxBytes);
    const passthrough = new PassThrough();
    const upload = new Upload({
      client,
      params: { Bucket: this.settings.bucket, Key: this.key(key), Body: passthrough, ...(options.contentType ? { ContentType: options.contentType } : {}) },
    });
    const feeding = pipeline(body, metered.stream, passthrough);
    try {
      await Promise.all([feeding, upload.done()]);
    } catch (error) {
      await upload.abort().catch(() => undefined);
      passthrough.destroy();
      throw wrap(error);
    }
    return metered.result();
  }

  async get(key: string): Promise<Readable> {
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      const answer = await (await this.s3()).send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
      return answer.Body as Readable;
    } catch (error) {
      throw wrap(error);
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      const head = await (await this.s3()).send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
      return { size: Number(head.ContentLength ?? 0) };
    } catch (error) {
      if ((error as { name?: string }).name === 'NotFound' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw wrap(error);
    }
  }

  async delete(key: string): Promise<void> {
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      await (await this.s3()).send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
    } catch (error) {
      throw wrap(error);
    }
  }

  async check(): Promise<void> {
    const { HeadBucketCommand } = await import('@aws-sdk/client-s3');
    try {
      await (await this.s3()).send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (error) {
      throw new StorageUnavailableError(`the bucket "${this.settings.bucket}" is not reachable: ${(error as Error).message}`);
    }
  }
}

/** Connection-level failures become StorageUnavailableError (503); the rest stay as they are. */
function wrap(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const e = error as { $metadata?: { httpStatusCode?: number }; code?: string; name?: string };
  const status = e.$metadata?.httpStatusCode;
  if (status === undefined || status >= 500 || status === 403 || e.code === 'ECONNREFUSED' || e.name === 'TimeoutError') {
    return new StorageUnavailableError(`private storage failed: ${(error as Error).message}`);
  }
  return error;
}

/** Storage that is not configured: every use answers 503 PRIVATE_PACKAGE_STORAGE_REQUIRED. */
export class NoStorage implements PrivateStorage {
  readonly name = 'none';
  private fail(): never {
    throw new StorageUnavailableError('private storage is not configured (STORAGE_DRIVER)');
  }
  async put(): Promise<StoredObject> {
    return this.fail();
  }
  async get(): Promise<Readable> {
    return this.fail();
  }
  async stat(): Promise<{ size: number } | null> {
    return this.fail();
  }
  async delete(): Promise<void> {
    return this.fail();
  }
  async check(): Promise<void> {
    this.fail();
  }
}

/** The 503 a route answers when storage cannot be used; never a public fallback. */
export function storageRequired(error: StorageUnavailableError): AppError {
  return new AppError(StorageErrors.PRIVATE_PACKAGE_STORAGE_REQUIRED, `${error.message}. Files and packages are only ever served privately; configure STORAGE_* and retry`);
}
