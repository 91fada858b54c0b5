import { formatCount } from '../../kit/format';

/**
 * Opens a private link the moment it arrives. A link lives 300 seconds and must not be kept or
 * shared, so the page never shows it: the browser fetches it at once, and the answer's
 * `Content-Disposition: attachment` makes that a download while the page stays.
 */
export function fetchPrivateLinkNow(url: string): void {
  window.location.assign(url);
}

const UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'];

/** 1536 → "1.5 KB" (powers of 1024; a display value, not money). */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '—';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${formatCount(bytes)} bytes` : `${new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 }).format(value)} ${UNITS[unit]}`;
}
