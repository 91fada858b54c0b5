import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { CreateProductBody, ProductIdParams, ProductList, ProductListQuery, ProductRow, UpdateProductBody } from './products.schemas.js';
import * as service from './products.service.js';

const tags = ['products'];

/** The product catalogue (beyond the contract: the dashboard and packages need products to exist). */
export const productRoutes = ({ db }: { db: Db }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/products',
    policy: { auth: 'account', permission: 'products.view' },
    schema: {
      tags,
      summary: 'List products',
      description: 'Newest first; only products in the caller’s scope (a product-scoped member sees their products).',
      querystring: ProductListQuery,
      response: { 200: ProductList, ...errorResponses(400, 401, 403) },
    },
    handler: ({ request, scope }) => service.listProducts(db, scope, request.query),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/developer/products/:productId',
    policy: { auth: 'account', permission: 'products.view', product: 'productId' },
    schema: {
      tags,
      summary: 'A product',
      description: 'With its live `productAppId`, the id plugins send (also as `appId`, its earlier name). A product of another workspace, or one the caller is not assigned to, answers 404.',
      params: ProductIdParams,
      response: { 200: ProductRow, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => service.getProduct(db, scope, request.params.productId),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/products',
    policy: { auth: 'account', permission: 'products.manage', allProducts: true },
    schema: {
      tags,
      summary: 'Create a product',
      description:
        'Prices are integer minor units of `currency`. New products are `draft` unless `status` says otherwise. The answer carries the new `productAppId` (also as `appId`); the secret product key is made on first use of the credentials routes and never returned. Needs all-products workspace access.',
      body: CreateProductBody,
      response: { 201: ProductRow, ...errorResponses(400, 401, 403) },
    },
    handler: async ({ request, reply, scope }) => {
      const product = await service.createProduct(db, scope, request.body);
      return reply.code(201).header('location', `/api/developer/products/${product.id}`).send(service.toProductRow(product));
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/developer/products/:productId',
    policy: { auth: 'account', permission: 'products.manage', product: 'productId' },
    schema: {
      tags,
      summary: 'Change a product',
      description: 'Any of the catalogue fields; the rest stay as they are. `storefrontUrl`, `description` and `currentVersion` may be set to null.',
      params: ProductIdParams,
      body: UpdateProductBody,
      response: { 200: ProductRow, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => service.updateProduct(db, scope, request.params.productId, request.body),
  }),
];
