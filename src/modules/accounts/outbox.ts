import { Type } from '@sinclair/typebox';
import { AuthErrors } from '../../platform/auth/policy.js';
import { defineRoute } from '../../platform/auth/define-route.js';
import { AppError } from '../../platform/http/errors.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { MailTransport, OutgoingEmail } from '../../platform/mail/transport.js';

/** The outbox keeps the newest e-mails of this process, no more. */
export const OUTBOX_SIZE = 100;
const LINK = /https?:\/\/[^\s<>"]+/g;

export interface OutboxEntry {
  id: number;
  to: string;
  subject: string;
  text: string;
  links: string[];
  sentAt: string;
}

/**
 * A mail catcher for development: passes each e-mail to the configured transport (the log or the
 * file) and keeps the newest ones in memory, with their links, for the console's outbox page, so
 * sign-in and invitation links can be followed without an SMTP server. Never built in production
 * (app.ts decides), so the route that reads it does not exist there.
 */
export class OutboxRecorder implements MailTransport {
  readonly name: string;
  private readonly kept: OutboxEntry[] = [];

  constructor(private readonly inner: MailTransport) {
    this.name = inner.name;
  }

  async send(email: OutgoingEmail): Promise<void> {
    await this.inner.send(email);
    this.kept.unshift({ id: email.id, to: email.to, subject: email.subject, text: email.text, links: email.text.match(LINK) ?? [], sentAt: new Date().toISOString() });
    this.kept.length = Math.min(this.kept.length, OUTBOX_SIZE);
  }

  close(): Promise<void> | void {
    return this.inner.close?.();
  }

  entries(): OutboxEntry[] {
    return [...this.kept];
  }
}

const OutboxAnswer = Type.Object(
  {
    rows: Type.Array(
      Type.Object(
        {
          id: Type.Integer({ description: 'The e-mail job’s id' }),
          to: Type.String(),
          subject: Type.String(),
          text: Type.String(),
          links: Type.Array(Type.String(), { description: 'Every address in the text, in order (sign-in and invitation links)' }),
          sentAt: Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const outboxRoutes = ({ outbox }: { outbox: OutboxRecorder }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/outbox',
    // Every e-mail of the instance, links included: owners only, and never a script's token.
    policy: { auth: 'account', permission: null, apiTokens: false },
    schema: {
      tags: ['console: team'],
      summary: 'E-mails this instance sent (development only)',
      description:
        `The newest ${OUTBOX_SIZE} e-mails this process sent, newest first, with their links: every workspace’s and the partner portal’s, so only a workspace owner may read it (403 OWNER_REQUIRED). ` +
        'Exists only outside production with the `log` or `file` mail transport; otherwise this route is absent (404).',
      response: { 200: OutboxAnswer, ...errorResponses(401, 403) },
    },
    handler: ({ scope }) => {
      if (!scope.owner) throw new AppError(AuthErrors.OWNER_REQUIRED, 'Only a workspace owner may read the outbox');
      return { rows: outbox.entries() };
    },
  }),
];
