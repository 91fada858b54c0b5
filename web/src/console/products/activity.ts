import { formatDateTime, formatMinor } from '../../kit/format';
import type { Activity } from './dashboard-model';

const str = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
const money = (cents: unknown, currency: unknown) => (typeof cents === 'number' && typeof currency === 'string' && currency ? formatMinor(cents, currency) : '');

/** One line per event of the product's recent activity, in words; kinds this page does not know are named as they are. */
export function describeActivity({ kind, fields: f }: Activity): string {
  switch (kind) {
    case 'sale':
      return `Sale ${money(f.amountCents, f.currency)} (order ${str(f.orderId)}${f.channel ? `, ${str(f.channel).replace(/_/g, ' ')}` : ''})`;
    case 'grant':
      return `Access granted (order ${str(f.orderId)})`;
    case 'refund':
      return `Refund ${money(f.refundedCents, f.currency)} (order ${str(f.orderId)}, ${str(f.refundStatus)})`;
    case 'file.uploaded':
      return `File uploaded: ${str(f.filename)}`;
    case 'file.registered':
      return `External file registered: ${str(f.filename)}`;
    case 'file.deleted':
      return `File deleted: ${str(f.filename)}`;
    case 'version.created':
      return `Version ${str(f.version)} added`;
    case 'version.updated':
      return `Version ${str(f.version)} changed`;
    case 'review.moderated':
      return `Review ${str(f.reviewId)}: ${str(f.from)} → ${str(f.to)}`;
    case 'reviews.imported':
      return `Reviews imported: ${str(f.inserted)} new of ${str(f.received)}`;
    case 'product.created':
      return 'Product created';
    case 'product.updated':
      return `Catalogue changed${Array.isArray(f.fields) ? `: ${f.fields.join(', ')}` : ''}`;
    case 'credential.rotated':
      return `Product key rotated (${str(f.environment)}); the old key is accepted until ${typeof f.previousKeyAcceptedUntil === 'string' ? formatDateTime(f.previousKeyAcceptedUntil) : 'now'}`;
    default:
      if (kind.startsWith('serial.')) return `Serial ${str(f.serialId)}: ${kind.slice('serial.'.length).replace(/_/g, ' ')}${f.status ? ` (${str(f.status)})` : ''}`;
      if (kind.startsWith('license.')) return `License ${kind.slice('license.'.length).replace(/_/g, ' ')} (serial ${str(f.serialId)})`;
      return kind.replace(/[._]/g, ' ');
  }
}
