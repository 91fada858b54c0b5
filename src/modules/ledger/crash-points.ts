// TEST-ONLY fault hook. PATCHBAY_TEST_CRASH_AT=<step>[:<agreement id>] makes the process SIGKILL
// itself when a payout run reaches that step (for that agreement's transfer only, when one is
// named: tests on a shared database must not kill a run on another test's transfer), so the
// kill -9 tests can stop a real `patchbay payouts run` at an exact point between its commits and
// its provider call, which a kill from outside cannot aim at. Read here and nowhere else, once;
// ignored when NODE_ENV=production.

export type CrashStep =
  /** The reservation (payable → in flight) committed; the provider not called yet. */
  | 'transfer-reserved'
  /** The provider accepted the payout; `submitted` not recorded yet. */
  | 'transfer-provider-accepted'
  /** `submitted` committed. */
  | 'transfer-submitted';

const [armedStep, armedAgreement] = (process.env.NODE_ENV === 'production' ? '' : (process.env.PATCHBAY_TEST_CRASH_AT ?? '')).split(':');

export function crashPoint(step: CrashStep, agreementId: number): void {
  if (armedStep === step && (!armedAgreement || Number(armedAgreement) === agreementId)) process.kill(process.pid, 'SIGKILL');
}
