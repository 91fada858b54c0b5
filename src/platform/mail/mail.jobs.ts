import type { JobRunner } from '../jobs/runner.js';
import { PermanentJobError } from '../jobs/runner.js';
import { EMAIL_JOB, type EmailJobPayload } from './mail.js';
import type { MailTransport } from './transport.js';

/** Sends queued e-mail through the configured transport; failures are retried by the runner (1, 2, 4, 8 minutes, then failed). */
export function registerMailJobs(runner: JobRunner, transport: MailTransport, from: string): void {
  runner.register(
    EMAIL_JOB,
    async (job) => {
      const email = job.payload as Partial<EmailJobPayload>;
      if (typeof email.to !== 'string' || typeof email.subject !== 'string' || typeof email.text !== 'string') {
        throw new PermanentJobError('the e-mail job has no recipient, subject or text');
      }
      await transport.send({ id: job.id, from, to: email.to, subject: email.subject, text: email.text });
      return { transport: transport.name };
    },
    // A slow mail server holds nothing but this lease.
    { leaseSeconds: 300 },
  );
}
