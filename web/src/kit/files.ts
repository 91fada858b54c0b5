import { formatCount } from './format';

/**
 * Files a page hands to the reader. A private link lives 300 seconds and must not be kept or
 * shared, so the page never shows it: the browser fetches it at once, and the answer's
 * `Content-Disposition: attachment` makes that a download while the page stays.
 */
export function fetchPrivateLinkNow(url: string): void {
  window.location.assign(url);
}

/**
 * Saves text the API answered (a license file, say) under `filename`, as a download of the
 * browser's own: an object URL that lives only for the click.
 */
export function saveTextAsFile(text: string, filename: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the click; the URL can go once the browser has read it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
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
