import { Type } from '@sinclair/typebox';
import { PERMISSIONS } from '../../platform/auth/permissions.js';
import { Email, Id, Text } from '../../platform/http/bounded.js';

export const SignInLinkBody = Type.Object({ email: Email() }, { additionalProperties: false });
export const SignInLinkAccepted = Type.Object({ accepted: Type.Literal(true), message: Type.String() }, { additionalProperties: false });

export const SignInBody = Type.Object({ token: Text(100, { description: 'The `dsl_…` token from the fragment of the e-mailed link' }) }, { additionalProperties: false });

const Account = Type.Object({ id: Type.Integer(), email: Type.String() }, { additionalProperties: false });
const WorkspaceEntry = Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.Boolean() }, { additionalProperties: false });

export const SessionOpened = Type.Object(
  {
    token: Type.String({ description: 'Bearer token for non-browser clients (`Authorization: Bearer pds_…`); browsers use the HttpOnly cookie set with this answer' }),
    expiresAt: Type.String({ format: 'date-time' }),
    account: Account,
    workspaces: Type.Array(WorkspaceEntry, { description: 'The workspaces the account is a member of, owned ones first' }),
  },
  { additionalProperties: false },
);

const PermissionName = Type.Union(Object.keys(PERMISSIONS).map((name) => Type.Literal(name)));

export const SessionWorkspaceHeaders = Type.Object({
  'x-workspace-id': Type.Optional(Id({ description: 'The workspace to describe; without it, the only workspace of a member of one' })),
});

export const SessionState = Type.Object(
  {
    expiresAt: Type.String({ format: 'date-time' }),
    account: Account,
    workspaces: Type.Array(WorkspaceEntry),
    workspace: Type.Union(
      [
        Type.Object(
          {
            id: Type.Integer(),
            name: Type.String(),
            owner: Type.Boolean(),
            permissions: Type.Array(PermissionName, { description: 'Every catalogue permission the member holds here (all of them for an owner or `*`)' }),
            products: Type.Union([Type.Literal('all'), Type.Array(Type.Integer())], { description: '`all`, or the ids of the assigned products' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The selected workspace (X-Workspace-Id, or the only one); null when a member of several picked none' },
    ),
  },
  { additionalProperties: false },
);

export const SessionEnded = Type.Object({ ended: Type.Literal(true) }, { additionalProperties: false });
