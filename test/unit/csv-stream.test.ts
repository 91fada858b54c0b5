import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import {
  CsvFormatError,
  CsvTooManyRowsError,
  csvDocument,
  csvStream,
  normaliseHeader,
  parseCsvRecords,
  type CsvCell,
} from '../../src/platform/csv/stream.js';

async function* batchesOf(...batches: CsvCell[][][]): AsyncGenerator<CsvCell[][]> {
  for (const batch of batches) yield batch;
}

async function collect(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

async function records(csv: string | string[], maxRows = 100): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = [];
  for await (const record of parseCsvRecords(Readable.from(Array.isArray(csv) ? csv : [csv]), maxRows)) out.push(record);
  return out;
}

describe('csvDocument', () => {
  it.each([
    { label: 'plain text', cells: ['Ann'], line: 'Ann' },
    { label: 'a comma', cells: ['Lee, Ann'], line: '"Lee, Ann"' },
    { label: 'a double quote', cells: ['The "Synth"'], line: '"The ""Synth"""' },
    { label: 'a line feed', cells: ['a\nb'], line: '"a\nb"' },
    { label: 'a carriage return', cells: ['a\rb'], line: '"a\rb"' },
    { label: 'a formula (neutralised, no quoting needed)', cells: ['=1+1'], line: "'=1+1" },
    { label: 'a formula with a comma (neutralised and quoted)', cells: ['=SUM(1,2)'], line: `"'=SUM(1,2)"` },
    { label: 'a number (written as a number, not neutralised)', cells: [-5], line: '-5' },
    { label: 'null and undefined (empty)', cells: [null, undefined], line: ',' },
    { label: 'booleans', cells: [true, false], line: 'true,false' },
    { label: 'a date (ISO 8601)', cells: [new Date('2026-01-02T03:04:05.000Z')], line: '2026-01-02T03:04:05.000Z' },
  ])('writes $label', ({ cells, line }) => {
    expect(csvDocument(['h'], [cells])).toBe(`h\r\n${line}\r\n`);
  });

  it('writes the header and ends every record with CRLF', () => {
    expect(csvDocument(['email', 'first_name'], [['a@b.co', 'Ann'], ['c@d.co', 'Ben']])).toBe('email,first_name\r\na@b.co,Ann\r\nc@d.co,Ben\r\n');
    expect(csvDocument(['email'], [])).toBe('email\r\n');
  });

  it('parses back to the neutralised cells', () => {
    const rows: CsvCell[][] = [
      ['Lee, Ann', 'say "hi"', 'two\nlines', '@handle', 12],
      ['-1', '+44 20 7946 0000', '\tTabbed', 'plain', 0],
    ];
    const parsed = parse(csvDocument(['a', 'b', 'c', 'd', 'e'], rows), { columns: true });
    expect(parsed).toEqual([
      { a: 'Lee, Ann', b: 'say "hi"', c: 'two\nlines', d: "'@handle", e: '12' },
      { a: "'-1", b: "'+44 20 7946 0000", c: "'\tTabbed", d: 'plain', e: '0' },
    ]);
  });
});

describe('csvStream', () => {
  it('writes every batch under one header, parseable and neutralised', async () => {
    const text = await collect(
      csvStream(
        ['email', 'first_name', 'note', 'count', 'created_at'],
        batchesOf(
          [
            ['a@b.co', 'Ann', '=HYPERLINK("http://evil")', 3, new Date('2026-01-01T00:00:00.000Z')],
            ['c@d.co', 'Lee, "Ben"', 'multi\nline', -2, null],
          ],
          [],
          [['e@f.co', '@Eve', '\r\nstarts with CR', 0, undefined]],
        ),
      ),
    );
    expect(text.startsWith('email,first_name,note,count,created_at\r\n')).toBe(true);
    expect(parse(text, { columns: true })).toEqual([
      { email: 'a@b.co', first_name: 'Ann', note: `'=HYPERLINK("http://evil")`, count: '3', created_at: '2026-01-01T00:00:00.000Z' },
      { email: 'c@d.co', first_name: 'Lee, "Ben"', note: 'multi\nline', count: '-2', created_at: '' },
      { email: 'e@f.co', first_name: "'@Eve", note: "'\r\nstarts with CR", count: '0', created_at: '' },
    ]);
  });

  it('writes only the header when there are no rows', async () => {
    expect(await collect(csvStream(['email', 'first_name'], batchesOf()))).toBe('email,first_name\r\n');
  });

  it('writes as many rows as it is given, across many batches', async () => {
    const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 500 }, (_, i): CsvCell[] => [b * 500 + i, `row ${b * 500 + i}`]));
    const parsed = parse(await collect(csvStream(['n', 'label'], batchesOf(...batches))), { columns: true }) as Array<{ n: string }>;
    expect(parsed).toHaveLength(10_000);
    expect(parsed.map((r) => Number(r.n))).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
  });

  it('fails the stream when fetching a batch fails', async () => {
    async function* failing(): AsyncGenerator<CsvCell[][]> {
      yield [['a@b.co']];
      throw new Error('database went away');
    }
    await expect(collect(csvStream(['email'], failing()))).rejects.toThrow('database went away');
  });
});

describe('normaliseHeader', () => {
  it.each([
    { input: 'First Name', output: 'firstname' },
    { input: 'first_name', output: 'firstname' },
    { input: 'firstName', output: 'firstname' },
    { input: 'E-Mail', output: 'email' },
    { input: ' Marketing  Consent ', output: 'marketingconsent' },
  ])('$input → $output', ({ input, output }) => {
    expect(normaliseHeader(input)).toBe(output);
  });
});

describe('parseCsvRecords', () => {
  it('keys records by normalised header and trims cells', async () => {
    expect(await records('First Name,E-Mail,product_id\r\n  Ann , ann@example.com ,7\r\n')).toEqual([
      { firstname: 'Ann', email: 'ann@example.com', productid: '7' },
    ]);
  });

  it('drops a byte-order mark and skips empty lines', async () => {
    expect(await records('\ufeffemail\n\na@b.co\n\nc@d.co\n')).toEqual([{ email: 'a@b.co' }, { email: 'c@d.co' }]);
  });

  it('reads quoted cells with commas, quotes and line breaks', async () => {
    expect(await records('email,note\na@b.co,"Lee, ""Ann""\nsecond line"\n')).toEqual([{ email: 'a@b.co', note: 'Lee, "Ann"\nsecond line' }]);
  });

  it('reads records split across chunks', async () => {
    expect(await records(['ema', 'il,first\na@b', '.co,An', 'n\n'])).toEqual([{ email: 'a@b.co', first: 'Ann' }]);
  });

  it('tolerates rows with fewer or more cells than the header', async () => {
    const parsed = await records('email,first\na@b.co\nc@d.co,Ben,extra\n');
    expect(parsed[0]).toEqual({ email: 'a@b.co' });
    expect(parsed[1]).toMatchObject({ email: 'c@d.co', first: 'Ben' });
  });

  it('accepts exactly maxRows rows', async () => {
    expect(await records('email\na@b.co\nc@d.co\ne@f.co\n', 3)).toHaveLength(3);
  });

  it('stops with CsvTooManyRowsError past maxRows, without reading the rest', async () => {
    const seen: Array<Record<string, string>> = [];
    let produced = 0;
    const input = Readable.from(
      (function* () {
        yield 'email\n';
        for (let i = 0; i < 1_000_000; i += 1) {
          produced += 1;
          yield `c${i}@example.com\n`;
        }
      })(),
    );
    const reading = (async () => {
      for await (const record of parseCsvRecords(input, 3)) seen.push(record);
    })();
    await expect(reading).rejects.toBeInstanceOf(CsvTooManyRowsError);
    await expect(reading).rejects.toMatchObject({ maxRows: 3, message: 'more than 3 rows' });
    expect(seen).toHaveLength(3);
    expect(produced).toBeLessThan(1_000_000);
    input.destroy();
  });

  it('reports malformed CSV as CsvFormatError', async () => {
    await expect(records('email,note\na@b.co,"unterminated\n')).rejects.toBeInstanceOf(CsvFormatError);
  });

  it('passes on errors of the input stream', async () => {
    const input = new Readable({ read() {} });
    input.push('email\na@b.co\n');
    setTimeout(() => input.destroy(new Error('connection reset')), 10);
    await expect(
      (async () => {
        for await (const _ of parseCsvRecords(input, 10)) {
          // drain
        }
      })(),
    ).rejects.toThrow('connection reset');
  });
});
