import { describe, expect, it } from 'vitest';
import { composeEmail, composeEmailDirect, type EmailContent } from '../../src/platform/mail/compose.js';

// composeEmail runs MJML once per shape of e-mail and fills each value into the layout it made; the
// HTML must be what MJML makes of that very e-mail, byte for byte, whatever the values hold.

const tricky = ['Tom & Jerry <b>bold</b> "quoted" \'single\'', 'Ünïcødé — ✓ 🎛️', 'pbslot1z pbslot10z look like markers', '  spaced  out  ', 'a\nnewline', '&amp; already escaped', 'x'.repeat(300)];

const cases: EmailContent[] = [
  { to: 'a@x.test', subject: 'Your license', brand: 'Acme Audio', preview: 'Keys inside', heading: 'Thanks for your purchase', paragraphs: ['One.', 'Two.'] },
  {
    to: 'b@x.test',
    subject: tricky[0]!,
    brand: tricky[1]!,
    preview: tricky[2]!,
    heading: tricky[3]!,
    paragraphs: [tricky[4]!, tricky[5]!, tricky[6]!],
    details: [{ label: 'Serial', value: 'ABCD-EFGH-1234' }, { label: tricky[0]!, value: tricky[2]! }],
    action: { label: 'Open the portal & sign in', url: 'https://portal.example/p?a=1&b="2"#token=x<y>' },
    footer: [tricky[1]!, 'You receive this because you bought something.'],
  },
  // Same shape as the second, other values: the kept layout must serve both.
  {
    to: 'c@x.test',
    subject: 'S',
    brand: 'B',
    preview: 'P',
    heading: 'H',
    paragraphs: ['1', '2', '3'],
    details: [{ label: 'L1', value: 'V1' }, { label: 'L2', value: 'V2' }],
    action: { label: 'Go', url: 'https://x.example/' },
    footer: ['f1', 'f2'],
  },
  // Whitespace MJML trims, and empty values it leaves out.
  { to: 'e@x.test', subject: '  spaced  ', brand: '\tB\n', preview: ' P ', heading: '\n H', paragraphs: [' a  b ', 'trail \n'], details: [{ label: ' L ', value: ' V ' }], action: { label: ' Go ', url: ' https://x.example/ ' }, footer: [' f '] },
  { to: 'f@x.test', subject: '', brand: 'B', preview: ' ', heading: 'H', paragraphs: [''], action: { label: 'Go', url: '' } },
  { to: 'd@x.test', subject: 'Eleven', brand: 'B', preview: 'P', heading: 'H', paragraphs: Array.from({ length: 11 }, (_, i) => `paragraph ${i}`), details: [], footer: [] },
];

describe('composeEmail', () => {
  it('writes the HTML MJML makes of each e-mail, also from a kept layout', async () => {
    for (const content of cases) {
      const { html } = await composeEmail(content);
      expect(html).toBe(await composeEmailDirect(content));
      expect(html).not.toMatch(/pbslot\d+z(?![\s\S]*look like)/);
    }
    // A second e-mail of each shape comes from the kept layout.
    for (const content of cases) expect((await composeEmail(content)).html).toBe(await composeEmailDirect(content));
  });
});
