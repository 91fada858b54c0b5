import { queryOptions } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../../api/client';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'patch', S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Product = Json<'/api/developer/products/{productId}', 'get', 200>;
export type Dashboard = Json<'/api/developer/products/{productId}/dashboard', 'get', 200>;
export type FileMetadata = Json<'/api/developer/products/{productId}/files', 'get', 200>['files'][number];
export type Version = Json<'/api/developer/products/{productId}/versions', 'get', 200>['versions'][number];
export type Review = Json<'/api/developer/products/{productId}/reviews', 'get', 200>['rows'][number];
export type ProductStatus = Product['status'];
export type Environment = 'live' | 'test';

export const productKeys = {
  all: ['products'] as const,
  one: (productId: number) => ['products', productId] as const,
};

export const productQuery = (productId: number) =>
  queryOptions({
    queryKey: [...productKeys.one(productId), 'row'],
    queryFn: () => unwrap(api.GET('/api/developer/products/{productId}', { params: { path: { productId } } })),
  });

/** The dashboard: one request, whose `access` says which sections the caller gets (contract 4.5, rule 1). */
export const dashboardQuery = (productId: number, environment: Environment, currency: string) =>
  queryOptions({
    queryKey: [...productKeys.one(productId), 'dashboard', environment, currency],
    queryFn: () => unwrap(api.GET('/api/developer/products/{productId}/dashboard', { params: { path: { productId }, query: { environment, currency } } })),
  });

export const filesQuery = (productId: number) =>
  queryOptions({
    queryKey: [...productKeys.one(productId), 'files'],
    queryFn: async () => (await unwrap(api.GET('/api/developer/products/{productId}/files', { params: { path: { productId } } }))).files,
  });

export const versionsQuery = (productId: number) =>
  queryOptions({
    queryKey: [...productKeys.one(productId), 'versions'],
    queryFn: async () => (await unwrap(api.GET('/api/developer/products/{productId}/versions', { params: { path: { productId } } }))).versions,
  });

export const packageStatusQuery = (productId: number, environment: Environment) =>
  queryOptions({
    queryKey: [...productKeys.one(productId), 'package-status', environment],
    queryFn: () => unwrap(api.GET('/api/developer/products/{productId}/plugin-package/status', { params: { path: { productId }, query: { environment } } })),
  });

export const restConfigQuery = (productId: number, environment: Environment) =>
  queryOptions({
    queryKey: [...productKeys.one(productId), 'rest-config', environment],
    queryFn: async () => (await unwrap(api.GET('/api/developer/products/{productId}/rest-config', { params: { path: { productId }, query: { environment } } }))).restApi,
  });
