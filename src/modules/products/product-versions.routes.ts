import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { CreateVersionBody, UpdateVersionBody, VersionList, VersionParams, VersionRecordRef } from './product-versions.schemas.js';
import { createVersion, listVersions, updateVersion } from './product-versions.service.js';
import { ProductIdParams } from './products.schemas.js';

const tags = ['product versions'];

export const versionRoutes = ({ db }: { db: Db }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId/versions',
    policy: { auth: 'account', permission: 'products.view', product: 'productId' },
    schema: {
      tags,
      summary: 'Version records',
      description: 'Saved records, the current one first; without saved records, the version the catalogue names (`currentVersion`, id `derived`), or none.',
      params: ProductIdParams,
      response: { 200: VersionList, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, scope }) => ({ versions: await listVersions(db, scope, request.params.productId) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products/:productId/versions',
    policy: { auth: 'account', permission: 'products.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Add a version record',
      description: 'The first record, or one sent with `isCurrent: true`, becomes the one current version (and the catalogue’s `currentVersion`). A version already recorded answers 409 CONFLICT.',
      params: ProductIdParams,
      body: CreateVersionBody,
      response: { 201: VersionRecordRef, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async ({ request, reply, scope }) => reply.code(201).send(await createVersion(db, scope, request.params.productId, request.body)),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/developer/products/:productId/versions/:versionId',
    policy: { auth: 'account', permission: 'products.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Change a version record',
      description: '`isCurrent: true` makes it the current version; there is always exactly one.',
      params: VersionParams,
      body: UpdateVersionBody,
      response: { 200: VersionRecordRef, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: ({ request, scope }) => updateVersion(db, scope, request.params.productId, request.params.versionId, request.body),
  }),
];
