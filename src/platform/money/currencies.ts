/**
 * ISO 4217 currency codes as the runtime's ICU data lists them (`Intl.supportedValuesOf`), so the
 * list is maintained with Node rather than by hand. ICU lists the currencies in circulation: not
 * withdrawn ones (DEM), funds codes (USN) or codes that name no money a sale can be made in
 * (XXX "no currency", XTS "testing", XAU gold).
 */
const ISO_4217 = new Set(Intl.supportedValuesOf('currency').map((code) => code.toLowerCase()));

/** True for a current ISO 4217 code in any case (`usd`, `EUR`). */
export function isIsoCurrency(code: string): boolean {
  return ISO_4217.has(code.toLowerCase());
}
