import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const portalErrorSpecs = {
  DEVICE_RELEASE_LIMIT: {
    status: 429,
    title: 'No more device releases for this serial right now',
    description:
      'the buyer released as many devices of this serial through the portal as the 30-day limit allows; `nextReleaseAt` (and `Retry-After`) say when the next release is possible, the vendor can release one sooner',
  },
  SERIAL_NOT_RELEASABLE: {
    status: 409,
    title: 'Devices of this serial cannot be released',
    description: 'the serial is suspended or revoked; `serialStatus` says which. The vendor decides about its seats',
  },
  MACHINE_REQUEST_MISMATCH: {
    status: 422,
    title: 'The machine request is for another license',
    description: "the machine request file names another serial or product than the license it was uploaded to; upload it to the serial it names",
  },
  MACHINE_REQUEST_UNREADABLE: {
    status: 400,
    title: 'The machine request file cannot be read',
    description: 'the uploaded `file` is not a machine request written by the plugin (JSON, at most 16 KiB); `errors` says what is wrong',
  },
} as const satisfies Record<string, ErrorSpec>;
export const PortalErrors = defineErrors(portalErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof portalErrorSpecs> {}
}
