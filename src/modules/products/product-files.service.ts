import { randomSymbols } from '../../platform/ids/codes.js';
import type { Readable } from 'node:stream';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { type Executor, inTransaction } from '../../platform/db/transaction.js';
import { findIllFormedText, textLength } from '../../platform/http/text-hygiene.js';
import { AppError, CommonErrors, notFound, type FieldError } from '../../platform/http/errors.js';
import type { LinkedObject, PrivateLinks } from '../../platform/links/private-links.js';
import type { PrivateStorage, StoredObject } from '../../platform/storage/storage.js';
import * as repo from './product-files.repo.js';
import { FILE_PLATFORMS, FILE_TYPES } from './product-files.schemas.js';
import { ProductErrors } from './products.errors.js';
import type { FileMetadata } from './products.schemas.js';
import { productRecordOrThrow, recordProductEvent } from './products.service.js';
import { DeleteStoredFileJob } from './products.jobs.js';

/** The kind under which delivery files are served behind private links. */
export const FILES_LINK_KIND = 'files';

export function toFileMetadata(f: repo.FileRecord): FileMetadata {
  return {
    id: f.id,
    filename: f.filename,
    platform: f.platform,
    type: f.type,
    sizeBytes: f.size_bytes,
    version: f.version,
    managed: f.managed,
    deliveryMode: f.managed ? 'private_link' : 'external_url',
    uploadedAt: f.uploaded_at.toISOString(),
    contentType: f.content_type,
    sha256: f.sha256,
    externalUrl: f.external_url,
  };
}

/** A file name as a download may carry it: the last path segment, printable, at most 255 characters. */
export function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  return base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
}

export interface FileFields {
  platform?: string | undefined;
  type?: string | undefined;
  version?: string | undefined;
}

function checkFields(fields: FileFields, prefix: string): { platform: string; type: string; version: string | null } {
  // Multipart fields bypass the JSON body check: NUL and lone surrogates are refused here, by name.
  for (const [name, value] of Object.entries(fields)) {
    const found = findIllFormedText(value, `${prefix}/${name}`);
    if (found) throw new AppError(CommonErrors.INVALID_TEXT, `${found.path} ${found.message}`, { errors: [found] });
  }
  const errors: FieldError[] = [];
  const platform = fields.platform ?? 'any';
  const type = fields.type ?? 'installer';
  if (!(FILE_PLATFORMS as readonly string[]).includes(platform)) errors.push({ path: `${prefix}/platform`, message: `must be one of ${FILE_PLATFORMS.join(', ')}` });
  if (!(FILE_TYPES as readonly string[]).includes(type)) errors.push({ path: `${prefix}/type`, message: `must be one of ${FILE_TYPES.join(', ')}` });
  const version = fields.version?.trim() || null;
  if (version !== null && textLength(version) > 50) errors.push({ path: `${prefix}/version`, message: 'must be at most 50 characters' });
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', 'The file fields are invalid', { errors });
  return { platform, type, version };
}

const newFileId = () => `file_${randomSymbols(20).toLowerCase()}`;

export interface ExternalFileInput {
  filename: string;
  url: string;
  platform?: string;
  type?: string;
  version?: string;
  sizeBytes?: number;
}

/** Registers a file hosted elsewhere (no storage involved): the API's JSON form, and fixtures. */
export async function registerExternalFile(db: Executor, scope: Scope, productId: number, body: ExternalFileInput): Promise<FileMetadata> {
  const checked = checkFields(body, 'body');
  const filename = cleanFilename(body.filename);
  if (!filename) throw new AppError('VALIDATION_FAILED', 'filename is empty', { errors: [{ path: 'body/filename', message: 'is empty' }] });
  return inTransaction(db, async (tx) => {
    await productRecordOrThrow(tx, scope, productId);
    const file = await repo.insertFile(tx, scope, {
      id: newFileId(),
      product_id: productId,
      filename,
      ...checked,
      managed: false,
      storage_key: null,
      external_url: body.url,
      content_type: null,
      size_bytes: body.sizeBytes ?? null,
      sha256: null,
      uploadedBy: scope.accountId || null,
    });
    await recordProductEvent(tx, scope, { productId, kind: 'file.registered', data: { fileId: file.id, filename, url: body.url } });
    return toFileMetadata(file);
  });
}

/**
 * Delivery files: uploads streamed into private storage (never a public URL), external files
 * registered by URL, metadata for listing, and private links for downloads.
 */
export class ProductFiles {
  constructor(
    private readonly db: Db,
    private readonly storage: PrivateStorage,
    private readonly links: PrivateLinks,
    readonly maxBytes: number,
  ) {
    links.register(FILES_LINK_KIND, (id) => this.resolveLink(id));
  }

  async list(scope: Scope, productId: number): Promise<FileMetadata[]> {
    await productRecordOrThrow(this.db, scope, productId);
    return (await repo.listFiles(this.db, scope, productId)).map(toFileMetadata);
  }

  /** Streams an upload into storage under a new id; `commitUpload` records it (or `discard` removes it). */
  async stageUpload(scope: Scope, productId: number, upload: { filename: string; contentType: string; body: Readable }) {
    await productRecordOrThrow(this.db, scope, productId);
    const filename = cleanFilename(upload.filename);
    if (!filename) {
      upload.body.resume();
      throw new AppError('VALIDATION_FAILED', 'The file part needs a file name', { errors: [{ path: 'body/file', message: 'has no file name' }] });
    }
    const id = newFileId();
    const key = `ws${scope.workspaceId}/products/${productId}/files/${id}`;
    const stored: StoredObject = await this.storage.put(key, upload.body, { contentType: upload.contentType, maxBytes: this.maxBytes });
    return { id, key, filename, contentType: upload.contentType, stored };
  }

  async discard(staged: { key: string }): Promise<void> {
    await this.storage.delete(staged.key).catch(() => undefined);
  }

  async commitUpload(
    scope: Scope,
    productId: number,
    staged: Awaited<ReturnType<ProductFiles['stageUpload']>>,
    fields: FileFields,
  ): Promise<FileMetadata> {
    let checked: ReturnType<typeof checkFields>;
    try {
      checked = checkFields(fields, 'body');
    } catch (error) {
      await this.discard(staged);
      throw error;
    }
    return inTransaction(this.db, async (tx) => {
      const file = await repo.insertFile(tx, scope, {
        id: staged.id,
        product_id: productId,
        filename: staged.filename,
        ...checked,
        managed: true,
        storage_key: staged.key,
        external_url: null,
        content_type: staged.contentType,
        size_bytes: staged.stored.size,
        sha256: staged.stored.sha256,
        uploadedBy: scope.accountId || null,
      });
      await recordProductEvent(tx, scope, { productId, kind: 'file.uploaded', data: { fileId: file.id, filename: file.filename, sizeBytes: file.size_bytes } });
      return toFileMetadata(file);
    });
  }

  async registerExternal(scope: Scope, productId: number, body: ExternalFileInput): Promise<FileMetadata> {
    return registerExternalFile(this.db, scope, productId, body);
  }

  /** Deletes the record now and the stored bytes through a job after the commit. */
  async remove(scope: Scope, productId: number, fileId: string): Promise<{ deleted: true; id: string }> {
    return inTransaction(this.db, async (tx) => {
      await productRecordOrThrow(tx, scope, productId);
      const file = await repo.deleteFile(tx, scope, productId, fileId);
      if (!file) throw notFound('File');
      if (file.storage_key) await DeleteStoredFileJob.enqueue(tx, { key: file.storage_key }, { workspaceId: scope.workspaceId });
      await recordProductEvent(tx, scope, { productId, kind: 'file.deleted', data: { fileId, filename: file.filename } });
      return { deleted: true as const, id: fileId };
    });
  }

  async link(scope: Scope, productId: number, fileId: string) {
    await productRecordOrThrow(this.db, scope, productId);
    const file = await repo.findFile(this.db, scope, productId, fileId);
    if (!file) throw notFound('File');
    if (!file.managed) {
      throw new AppError(ProductErrors.EXTERNAL_FILE, 'This file is hosted elsewhere; it has no private link', { body: { externalUrl: file.external_url } });
    }
    // Storage must be there before a link is promised (503 otherwise, never a public fallback).
    await this.storage.check();
    return this.links.linkFor(FILES_LINK_KIND, file.id, file.filename);
  }

  private async resolveLink(fileId: string): Promise<LinkedObject | null> {
    const file = await repo.findFileForLink(this.db, fileId);
    if (!file?.storage_key) return null;
    const body = await this.storage.get(file.storage_key);
    return {
      body,
      filename: file.filename,
      contentType: file.content_type ?? 'application/octet-stream',
      size: file.size_bytes,
      completed: () => repo.countDownload(this.db, file.workspace_id, file.product_id, file.id),
    };
  }
}
