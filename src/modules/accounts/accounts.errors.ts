import { defineErrors, type CodesOf, type ErrorSpec } from '../../platform/http/errors.js';

const accountErrorSpecs = {
  MEMBER_EXISTS: { status: 409, title: 'The address already belongs to a member of this workspace', description: 'an invitation names an address that is already a member of the workspace; change that member instead' },
  GRANT_EXCEEDS_OWN_ACCESS: {
    status: 403,
    title: 'You cannot grant or change access you do not hold yourself',
    description: 'a member may grant only permissions and products they hold, and may change or remove only members whose access is within their own; `detail` names what is missing',
  },
  OWNER_PROTECTED: { status: 409, title: 'The workspace owner cannot be removed or changed', description: 'the owner of a workspace holds every permission and product; they cannot be removed, demoted or narrowed through the API' },
  UNKNOWN_PRODUCT: { status: 422, title: 'A product id names no product you can assign', description: '`products` names an id that is not a product of the workspace within the caller\'s own assignment; `errors` lists each' },
  API_TOKEN_LIMIT_REACHED: { status: 409, title: 'You have as many API tokens as a member may hold', description: 'a member holds at most 50 unrevoked API tokens in a workspace; revoke one first' },
} as const satisfies Record<string, ErrorSpec>;
export const AccountErrors = defineErrors(accountErrorSpecs);

declare module '../../platform/http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof accountErrorSpecs> {}
}
