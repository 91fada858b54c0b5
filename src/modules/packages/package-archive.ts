import { createHash } from 'node:crypto';
import { zipSync, type Zippable } from 'fflate';
import type { TemplateFile } from './package-templates.js';

/**
 * A package archive: the filled template files plus `patchbay-manifest.json` (version, variant,
 * settings and the SHA-256 of every file), zipped deterministically: entries sorted, one fixed
 * timestamp, Unix permissions 0644, one compression level. The same inputs give the same bytes.
 */

/** Every entry's time: the earliest a zip can say (local time 1980-01-01), so builds never differ by clock. */
const FIXED_TIME = new Date(1980, 0, 1, 0, 0, 0);
const FILE_ATTRS = 0o100644 << 16;
export const MANIFEST_NAME = 'patchbay-manifest.json';

export interface ManifestInput {
  packageFormat: 1;
  templateVersion: string;
  variant: string;
  product: { id: number; name: string; appId: string; environment: string };
  settings: Record<string, unknown>;
  licensing: { baseUrl: string; offlineGraceDays: number; keyIds: string[] };
}

export interface Archive {
  bytes: Buffer;
  sha256: string;
  manifest: ManifestInput & { files: Array<{ path: string; sha256: string; size: number }> };
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

export function buildArchive(root: string, files: TemplateFile[], manifestInput: ManifestInput): Archive {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const manifest = {
    ...manifestInput,
    files: sorted.map((f) => ({ path: f.path, sha256: sha256(f.content), size: f.content.length })),
  };
  const entries: Zippable = {};
  const add = (path: string, content: Uint8Array) => {
    entries[`${root}/${path}`] = [content, { mtime: FIXED_TIME, os: 3, attrs: FILE_ATTRS, level: 6 }];
  };
  add(MANIFEST_NAME, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8'));
  for (const f of sorted) add(f.path, f.content);
  const bytes = Buffer.from(zipSync(entries));
  return { bytes, sha256: sha256(bytes), manifest };
}
