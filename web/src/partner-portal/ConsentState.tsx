import { Badge } from '@mantine/core';
import type { ProgramView } from './model';

/** Where live consent stands, in words: both parties must consent to the accepted terms. */
export function consentSummary(p: ProgramView): string {
  if (p.termsVersion === null) return 'Not accepted yet';
  if (p.consent.live) return 'Live: both consented';
  if (p.consent.recipient) return 'Waiting for the developer';
  if (p.consent.developer) return 'Waiting for your consent';
  return 'Waiting for both consents';
}

export function ConsentBadge({ program }: { program: ProgramView }) {
  const text = consentSummary(program);
  const color = program.consent.live ? 'green' : program.termsVersion === null ? 'gray' : 'yellow';
  return (
    <Badge color={color} variant="outline" autoContrast>
      {text}
    </Badge>
  );
}
