import { Type } from '@sinclair/typebox';
import { PERMISSIONS, WILDCARD } from '../../platform/auth/permissions.js';
import { Email, Id, List } from '../../platform/http/bounded.js';
import { ListEnvelope, PagingQuery } from '../../platform/http/schemas.js';

const GrantedPermission = Type.Union([...Object.keys(PERMISSIONS), WILDCARD].map((name) => Type.Literal(name)), {
  description: 'A permission of the catalogue, or `*` for all of them',
});
const Permissions = List(GrantedPermission, 50, { uniqueItems: true, description: 'Permissions from the catalogue (docs/permissions.md); only ones the caller holds' });
const Products = Type.Union([Type.Literal('all'), List(Id(), 1000, { uniqueItems: true })], {
  description: '`all` (every product, now and later) or the ids of the assigned products; only products the caller is assigned to',
});

export const MemberIdParams = Type.Object({ memberId: Id({ description: 'The member’s account id' }) }, { additionalProperties: false });
export const MemberListQuery = Type.Object({ ...PagingQuery }, { additionalProperties: false });

export const MemberRow = Type.Object(
  {
    id: Type.Integer({ description: 'The member’s account id' }),
    email: Type.String(),
    owner: Type.Boolean({ description: 'The owner holds every permission and product and cannot be removed or changed' }),
    permissions: Type.Array(Type.String()),
    products: Type.Union([Type.Literal('all'), Type.Array(Type.Integer())]),
    invited_at: Type.String({ format: 'date-time', description: 'When the membership was made' }),
    joined_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the member first signed in after the invitation; null until then' }),
  },
  { additionalProperties: false },
);

export const MemberList = ListEnvelope(MemberRow);

export const InviteMemberBody = Type.Object({ email: Email(), permissions: Permissions, products: Products }, { additionalProperties: false });

export const ChangeMemberBody = Type.Object({ permissions: Type.Optional(Permissions), products: Type.Optional(Products) }, { additionalProperties: false, minProperties: 1 });

export const MemberRemoved = Type.Object({ id: Type.Integer(), removed: Type.Literal(true) }, { additionalProperties: false });
