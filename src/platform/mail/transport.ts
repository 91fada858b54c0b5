import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';

export interface OutgoingEmail {
  id: number;
  from: string;
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative to the text: sent together as multipart/alternative, the text first. */
  html?: string;
}

/** Delivers one e-mail or throws; the outbox retries failures. */
export interface MailTransport {
  readonly name: string;
  send(email: OutgoingEmail): Promise<void>;
  close?(): Promise<void> | void;
}

/** Default: writes a one-line record to the application log (recipient and subject only). */
export class LogTransport implements MailTransport {
  readonly name = 'log';
  constructor(private readonly log: (entry: Record<string, unknown>, message: string) => void) {}
  async send(email: OutgoingEmail): Promise<void> {
    this.log({ emailId: email.id, to: email.to, subject: email.subject }, 'e-mail delivered to the log transport');
  }
}

/** Appends each e-mail (its text and HTML parts) as a JSON line to `<dir>/outbox.jsonl`, for local development and inspection. */
export class FileTransport implements MailTransport {
  readonly name = 'file';
  constructor(private readonly dir: string) {}
  async send(email: OutgoingEmail): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await appendFile(join(this.dir, 'outbox.jsonl'), `${JSON.stringify({ ...email, sentAt: new Date().toISOString() })}\n`);
  }
}

/** SMTP through nodemailer; `SMTP_URL` such as smtps://user:pass@smtp.example.com:465. */
export class SmtpTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly transporter: nodemailer.Transporter;
  constructor(url: string) {
    this.transporter = nodemailer.createTransport(url);
  }
  async send(email: OutgoingEmail): Promise<void> {
    // With both parts nodemailer writes multipart/alternative: clients show the HTML, or the text when they cannot.
    await this.transporter.sendMail({ from: email.from, to: email.to, subject: email.subject, text: email.text, ...(email.html ? { html: email.html } : {}), messageId: undefined });
  }
  close(): void {
    this.transporter.close();
  }
}

/** Keeps what it was given; for tests. */
export class MemoryTransport implements MailTransport {
  readonly name = 'memory';
  readonly sent: OutgoingEmail[] = [];
  async send(email: OutgoingEmail): Promise<void> {
    this.sent.push(email);
  }
}
