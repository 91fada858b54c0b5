import type { CustomerScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { notFound } from '../../platform/http/errors.js';
import type { LinkAnswer, PrivateLinks } from '../../platform/links/private-links.js';
import type { PrivateStorage } from '../../platform/storage/storage.js';
import type { DownloadRow } from './customer-portal.schemas.js';
import * as repo from './downloads.repo.js';

/** The kind under which the products module serves delivery files behind private links. */
const FILES_LINK_KIND = 'files';

function toDownloadRow(f: repo.DownloadRecord): DownloadRow {
  return {
    file_id: f.id,
    product_id: f.product_id,
    product: f.product,
    filename: f.filename,
    platform: f.platform,
    type: f.type,
    version: f.version,
    changelog: f.changelog,
    releasedAt: f.release_date ? new Date(f.release_date).toISOString() : null,
    sizeBytes: f.size_bytes,
    uploadedAt: f.uploaded_at.toISOString(),
  };
}

/** Delivery files of the products the buyer is entitled to, each handed out as a private link (never a public URL). */
export class PortalDownloads {
  constructor(
    private readonly db: Db,
    private readonly storage: PrivateStorage,
    private readonly links: PrivateLinks,
  ) {}

  async list(customer: CustomerScope): Promise<{ rows: DownloadRow[] }> {
    return { rows: (await repo.listDownloads(this.db, customer)).map(toDownloadRow) };
  }

  async link(customer: CustomerScope, fileId: string): Promise<LinkAnswer> {
    const file = await repo.findDownload(this.db, customer, fileId);
    if (!file) throw notFound('File');
    // Storage must be there before a link is promised (503 otherwise, never a public fallback).
    await this.storage.check();
    return this.links.linkFor(FILES_LINK_KIND, file.id, file.filename);
  }
}
