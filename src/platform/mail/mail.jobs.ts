import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { JobContext, JobRunner } from '../jobs/runner.js';
import { PermanentJobError } from '../jobs/runner.js';
import { type EmailContext, EmailJob, findEmailKind, type RenderedEmail, type SkippedEmail } from './mail.js';
import type { MailTransport } from './transport.js';

export interface MailJobOptions {
  from: string;
  /** What render functions use (the workspace comes from each job). */
  context: Omit<EmailContext, 'workspaceId'>;
}

/**
 * Renders and sends queued e-mail through the configured transport. Failures are retried by the
 * runner (1, 2, 4, 8 minutes, then failed). This handler stays in `platform/mail`, unlike every
 * other job's, because sending is not any module's domain: the transport, the catalogue of kinds
 * and rendering are shared by every module, and each kind's render function (the domain part)
 * lives in its module's `<domain>.emails.ts`.
 */
export function registerMailJobs(runner: JobRunner, transport: MailTransport, options: MailJobOptions): void {
  runner.handle(EmailJob, async (job) => {
    const { kind, email } = await render(job, options.context);
    if ('skip' in email) return { kind, skipped: email.skip };
    await transport.send({ id: job.id, from: options.from, ...email });
    return { kind, transport: transport.name };
  });
}

async function render(job: JobContext<Static<typeof EmailJob.payload>>, context: MailJobOptions['context']): Promise<{ kind: string; email: RenderedEmail | SkippedEmail }> {
  const payload = job.payload;
  if (!('ref' in payload)) {
    // Queued before e-mails were rendered at send time (migration 0019): sent as it was written.
    return { kind: payload.kind ?? 'unknown', email: { to: payload.to, subject: payload.subject, text: payload.text } };
  }
  const kind = payload.kind;
  const definition = findEmailKind(kind);
  if (!definition) throw new PermanentJobError(`no e-mail kind "${kind}" is defined`);
  if (!Value.Check(definition.payload, payload.ref)) throw new PermanentJobError(`the "${kind}" e-mail job's references do not match its schema`);
  return { kind, email: await definition.render(payload.ref, { ...context, workspaceId: job.workspaceId }) };
}
