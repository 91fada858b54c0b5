import type { FastifyReply } from 'fastify';

/**
 * Sends an answer that is already JSON text (a list whose rows PostgreSQL wrote). Fastify sends a string with a
 * JSON content type as it is, without the route's serializer: the text must match the route's response schema,
 * which the route's tests check field by field against the schema and the database (test/customers/list.test.ts).
 */
export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
