/**
 * Spreadsheet formula injection: a cell that starts with = + - @, a tab or a
 * carriage return can be executed by Excel, LibreOffice or Google Sheets. Such
 * text cells are prefixed with a single quote, which spreadsheets display as
 * text. Numbers are written as numbers and never touched.
 */
const DANGEROUS_START = /^[=+\-@\t\r]/;

export function neutraliseCell(value: string): string {
  return DANGEROUS_START.test(value) ? `'${value}` : value;
}
