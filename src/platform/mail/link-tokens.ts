import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A kind of e-mailed link token. The purpose keeps the tokens of different kinds apart even when
 * they come from one key and one nonce; the prefix makes a leaked token recognisable (and
 * redactable) in text.
 */
export interface LinkTokenKind {
  readonly purpose: string;
  readonly prefix: string;
}

export interface MintedToken {
  /** The credential: goes into the e-mail (or, once, into an answer) and nowhere else. */
  token: string;
  /** Stored with the link: useless without the service's encryption key. */
  nonce: string;
  /** Stored with the link: how a presented token is found. */
  hash: string;
}

export const hashLinkToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Tokens of links that are e-mailed (sign-in links, invitations). A token is an HMAC of a random
 * per-link nonce under a key derived from the service's encryption key; the link's table keeps the
 * nonce and the token's hash, never the token. The queued e-mail carries only the link's id, and
 * the token is derived again when the e-mail is rendered, so neither the `jobs` table, nor a
 * backup of the database, nor the log holds a usable token.
 *
 * Why a nonce and not the link's id alone: ids repeat after a database is restored to an earlier
 * point (or re-created under the same key), and an old e-mail must never open a new link.
 */
export class LinkTokens {
  private readonly key: Buffer;

  constructor(encryptionKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', encryptionKey, Buffer.alloc(0), 'patchbay e-mailed link tokens v1', 32));
  }

  private derive(kind: LinkTokenKind, nonce: string): string {
    return kind.prefix + createHmac('sha256', this.key).update(`${kind.purpose}\n${nonce}`).digest('base64url');
  }

  /** A new link's token, with what its row stores. */
  mint(kind: LinkTokenKind): MintedToken {
    const nonce = randomBytes(16).toString('base64url');
    const token = this.derive(kind, nonce);
    return { token, nonce, hash: hashLinkToken(token) };
  }

  /**
   * The token of a stored link, at send time. Null when it no longer matches the stored hash: the
   * encryption key was changed since the link was made, and the link cannot be e-mailed any more.
   */
  rederive(kind: LinkTokenKind, stored: { nonce: string; hash: string }): string | null {
    const token = this.derive(kind, stored.nonce);
    const expected = Buffer.from(stored.hash, 'hex');
    const actual = Buffer.from(hashLinkToken(token), 'hex');
    return expected.length === actual.length && timingSafeEqual(expected, actual) ? token : null;
  }
}
