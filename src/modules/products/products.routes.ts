import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireScope } from '../../platform/auth/policy.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { CreateProductBody, ProductIdParams, ProductList, ProductListQuery, ProductRow, UpdateProductBody } from './products.schemas.js';
import * as service from './products.service.js';

const tags = ['products'];

/** The product catalogue (beyond the contract: the dashboard and packages need products to exist). */
export const productRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.get(
    '/api/developer/products',
    {
      config: { policy: { auth: 'account', permission: 'products.view' } },
      schema: {
        tags,
        summary: 'List products',
        description: 'Newest first; only products in the caller’s scope (a product-scoped member sees their products).',
        querystring: ProductListQuery,
        response: { 200: ProductList, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.listProducts(db, requireScope(request), request.query),
  );

  app.get(
    '/api/developer/products/:productId',
    {
      config: { policy: { auth: 'account', permission: 'products.view', product: 'productId' } },
      schema: {
        tags,
        summary: 'A product',
        description: 'With its live `appId` (the productAppId plugins send). A product of another workspace, or one the caller is not assigned to, answers 404.',
        params: ProductIdParams,
        response: { 200: ProductRow, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.getProduct(db, requireScope(request), request.params.productId),
  );

  app.post(
    '/api/developer/products',
    {
      config: { policy: { auth: 'account', permission: 'products.manage', allProducts: true } },
      schema: {
        tags,
        summary: 'Create a product',
        description:
          'Prices are integer minor units of `currency`. New products are `draft` unless `status` says otherwise. The answer carries the new `appId`; the secret product key is made on first use of the credentials routes and never returned. Needs all-products workspace access.',
        body: CreateProductBody,
        response: { 201: ProductRow, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const product = await service.createProduct(db, requireScope(request), request.body);
      return reply.code(201).header('location', `/api/developer/products/${product.id}`).send(service.toProductRow(product));
    },
  );

  app.patch(
    '/api/developer/products/:productId',
    {
      config: { policy: { auth: 'account', permission: 'products.manage', product: 'productId' } },
      schema: {
        tags,
        summary: 'Change a product',
        description: 'Any of the catalogue fields; the rest stay as they are. `storefrontUrl`, `description` and `currentVersion` may be set to null.',
        params: ProductIdParams,
        body: UpdateProductBody,
        response: { 200: ProductRow, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.updateProduct(db, requireScope(request), request.params.productId, request.body),
  );
};
