import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** Asserts an RFC 9457 problem answer with a stable code and returns its body. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> & { errors?: unknown[] } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  return body;
}
