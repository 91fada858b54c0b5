import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../src/platform/http/logging.js';

/** The service's own logger configuration, writing into memory: what a test sees is what production would log. */
export function captureLog(level = 'debug') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: pino(loggerOptions(level), stream), text: () => lines.join(''), lines };
}
