import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Plugin package templates: the files under `templates/<variant>/`, kept in the repository and
 * filled with one product's settings. A placeholder is `{{name}}` (the value as text) or
 * `{{json name}}` (the value as a JSON literal, which is also a valid JavaScript literal and, for
 * the ASCII values used in string positions, a valid C++ string literal). An unknown name fails
 * the build, so a template can never ship with a hole in it.
 */

export type PackageVariant = 'pluginscript' | 'native';
export const PACKAGE_VARIANTS: readonly PackageVariant[] = ['pluginscript', 'native'];

export type ExperienceMode = 'validation-only' | 'storefront-only' | 'storefront-validation';
export const EXPERIENCE_MODES: readonly ExperienceMode[] = ['validation-only', 'storefront-only', 'storefront-validation'];
export const RELEASE_CHANNELS = ['stable'] as const;
export type ReleaseChannel = (typeof RELEASE_CHANNELS)[number];

/** Version of the template set; bumped when any template changes what it does. */
export const TEMPLATE_VERSION = '1.2.0';

/** Everything a template may use. */
export interface TemplateValues {
  variant: PackageVariant;
  templateVersion: string;
  productId: number;
  productName: string;
  /** The productAppId the plugin sends (the live or test credential's appId). */
  appId: string;
  /** The product key of that environment, in clear: it ships inside the plugin. */
  productKey: string;
  environment: 'live' | 'test';
  /** Base URL of the licensing runtime, e.g. https://api.example.com/api/licensing/v1 (no trailing slash). */
  licensingBaseUrl: string;
  /** The workspace's JWKS (Ed25519 public keys), as JSON text, pinned at build time. */
  jwksJson: string;
  offlineGraceDays: number;
  offlineGraceSeconds: number;
  experienceMode: ExperienceMode;
  uiWidth: number;
  uiHeight: number;
  releaseChannel: ReleaseChannel;
  /** Where the in-plugin store sends buyers ('' when the product and workspace have none). */
  storefrontUrl: string;
}

export interface TemplateFile {
  /** Path inside the archive, with forward slashes. */
  path: string;
  content: Buffer;
}

const TEMPLATE_ROOT = fileURLToPath(new URL('./templates/', import.meta.url));
const PLACEHOLDER = /\{\{(json )?([A-Za-z][A-Za-z0-9]*)\}\}/g;

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(path.join(dir, entry.name), rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/** Fills one template text; throws on a placeholder that names no value. */
export function fillTemplate(text: string, values: TemplateValues, file = 'template'): string {
  return text.replace(PLACEHOLDER, (_match, json: string | undefined, name: string) => {
    if (!Object.hasOwn(values, name)) throw new Error(`${file}: unknown placeholder {{${json ?? ''}${name}}}`);
    const value = values[name as keyof TemplateValues];
    return json ? JSON.stringify(value) : String(value);
  });
}

/** The files of a variant, filled, in a stable (sorted) order. */
export function renderTemplates(values: TemplateValues): TemplateFile[] {
  const root = path.join(TEMPLATE_ROOT, values.variant);
  return listFiles(root).map((rel) => {
    const raw = fs.readFileSync(path.join(root, rel), 'utf8');
    return { path: rel, content: Buffer.from(fillTemplate(raw, values, `${values.variant}/${rel}`), 'utf8') };
  });
}
