import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver saw it, with what verifying its signature said for each secret it knows. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The parsed body when a known secret verified the signature, else null. */
  event: { id: string; type: string; created_at: string; workspace_id: number; data: Record<string, unknown> } | null;
  /** The secrets (by index in `secrets`) whose signature verified. */
  verifiedWith: number[];
}

/** What the receiver answers to the n-th request (1-based): a status, or `hang` (never answers). */
export type Behaviour = (n: number, request: http.IncomingMessage) => number | 'hang' | { status: number; body: string };

/**
 * A real webhook receiver on loopback: records every request, verifies its signature with the
 * Standard Webhooks library against every secret it was given, and answers as told.
 */
export class Receiver {
  readonly received: Received[] = [];
  secrets: string[] = [];
  behaviour: Behaviour = () => 200;
  private readonly server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verifiedWith: number[] = [];
      let event: Received['event'] = null;
      this.secrets.forEach((secret, i) => {
        try {
          event = new Webhook(secret).verify(body, request.headers as Record<string, string>) as Received['event'];
          verifiedWith.push(i);
        } catch {
          // Not signed with this secret.
        }
      });
      this.received.push({ path: request.url ?? '/', headers: request.headers, body, event, verifiedWith });
      const answer = this.behaviour(this.received.length, request);
      if (answer !== 'hang') {
        if (typeof answer === 'number') response.writeHead(answer).end(answer < 300 ? 'ok' : 'no');
        else response.writeHead(answer.status).end(answer.body);
      }
      this.waiters = this.waiters.filter((w) => !w());
    });
  });
  private waiters: Array<() => boolean> = [];
  port = 0;

  async start(host = '127.0.0.1'): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hooks', host = '127.0.0.1'): string {
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.port}${path}`;
  }

  /** Events that verified, of one type. */
  events(type?: string) {
    return this.received.filter((r) => r.event && (!type || r.event.type === type)).map((r) => r.event!);
  }

  /** Resolves once `predicate` holds for what was received (checked after each request), or rejects after `ms`. */
  until(predicate: (received: Received[]) => boolean, ms = 15_000): Promise<void> {
    if (predicate(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver: condition not met within ${ms} ms (${this.received.length} requests)`)), ms);
      this.waiters.push(() => {
        if (!predicate(this.received)) return false;
        clearTimeout(timer);
        resolve();
        return true;
      });
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
