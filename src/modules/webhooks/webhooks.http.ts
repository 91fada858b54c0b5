import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedTarget } from '../../platform/net/address-policy.js';

/** What a delivery keeps of a response body (the log shows it). */
export const RESPONSE_EXCERPT_BYTES = 2048;
/** Read at most this much of a response (the rest is not waited for: the connection is dropped). */
const RESPONSE_READ_LIMIT = 64 * 1024;

export interface PostOutcome {
  /** The response status, or null when none arrived (refused, timed out, connection error). */
  status: number | null;
  durationMs: number;
  /** The first 2 KB of the response body, as text. */
  body: string | null;
  /** Why no response arrived. */
  error: string | null;
}

/**
 * Posts to the address that was checked, never to a second lookup of the name (DNS rebinding
 * cannot swap it between the check and the connection); TLS still verifies the certificate
 * against the URL's host name. Redirects are not followed (a 3xx is a failed attempt), the
 * whole exchange has `timeoutMs`, and at most 64 KB of the answer is read.
 */
export class WebhookClient {
  // Keep-alive connections per host and port; each was opened to a checked address.
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  };

  constructor(private readonly timeoutMs: number) {}

  post(url: URL, target: CheckedTarget, body: string, headers: Record<string, string>): Promise<PostOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
    return new Promise<PostOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: Omit<PostOutcome, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...outcome, durationMs: elapsed() });
      };
      const request = (protocol === 'https:' ? https : http).request(
        {
          protocol,
          hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          agent: this.agents[protocol],
          lookup: pinned,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (kept < RESPONSE_EXCERPT_BYTES) {
              chunks.push(chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept));
              kept += Math.min(chunk.length, RESPONSE_EXCERPT_BYTES - kept);
            }
            // Enough: the rest is not ours to wait for.
            if (read > RESPONSE_READ_LIMIT) {
              response.destroy();
              finish({ status: response.statusCode ?? null, body: excerpt(chunks), error: null });
            }
          });
          response.on('end', () => finish({ status: response.statusCode ?? null, body: excerpt(chunks), error: null }));
          response.on('error', () => finish({ status: response.statusCode ?? null, body: excerpt(chunks), error: null }));
        },
      );
      const timer = setTimeout(() => {
        request.destroy();
        finish({ status: null, body: null, error: `no answer within ${this.timeoutMs} ms` });
      }, this.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => finish({ status: null, body: null, error: error.code ? `${error.code}: ${error.message}` : error.message }));
      request.end(body);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

// Text for the log: NUL cannot be stored in a text column, and a cut multi-byte character becomes U+FFFD.
const excerpt = (chunks: Buffer[]) => (chunks.length === 0 ? '' : Buffer.concat(chunks).toString('utf8').replace(/\u0000/g, ''));
