import type { FastifyRequest } from 'fastify';
import { AppError, CommonErrors } from '../../platform/http/errors.js';
import { findIllFormedText } from '../../platform/http/text-hygiene.js';
import { PortalErrors } from './customer-portal.errors.js';

/** A machine request is a few hundred bytes; anything far larger is not one. */
export const MACHINE_REQUEST_MAX_BYTES = 16 * 1024;

const unreadable = (message: string) => new AppError(PortalErrors.MACHINE_REQUEST_UNREADABLE, message, { errors: [{ path: 'body/file', message }] });

async function readCapped(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    // Keep reading (and dropping) so the client is not cut off mid-upload; refuse once it is in.
    if (size <= MACHINE_REQUEST_MAX_BYTES) chunks.push(chunk);
  }
  if (size > MACHINE_REQUEST_MAX_BYTES) throw unreadable(`is larger than ${MACHINE_REQUEST_MAX_BYTES} bytes`);
  return Buffer.concat(chunks);
}

/**
 * The offline-activation route takes the machine request as JSON, or as the file the plugin wrote
 * (multipart `file`). The file is read here, before validation, and becomes `{ file: <its JSON> }`,
 * so the route's schema checks it like a JSON body.
 */
export async function readMachineRequestFile(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  let content: unknown;
  let seen = false;
  for await (const part of request.parts()) {
    if (part.type !== 'file') continue;
    if (part.fieldname !== 'file' || seen) {
      part.file.resume();
      throw unreadable('send exactly one file, in the "file" field');
    }
    seen = true;
    const bytes = await readCapped(part.file);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw unreadable('is not UTF-8 text');
    }
    try {
      content = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      throw unreadable('is not JSON');
    }
  }
  if (!seen) throw unreadable('is missing: send the machine request file in the "file" field');
  const ill = findIllFormedText(content, 'body/file');
  if (ill) throw new AppError(CommonErrors.INVALID_TEXT, `${ill.path} ${ill.message}`, { errors: [ill] });
  request.body = { file: content };
}
