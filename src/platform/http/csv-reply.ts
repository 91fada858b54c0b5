import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';

export const CsvBody = Type.String({ description: 'text/csv; charset=utf-8' });

/** Sends CSV as a download; a stream is piped with back-pressure. */
export function sendCsv(reply: FastifyReply, filename: string, body: string | Readable) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .send(body);
}

export const datedFilename = (prefix: string) => `${prefix}-${new Date().toISOString().slice(0, 10)}.csv`;
