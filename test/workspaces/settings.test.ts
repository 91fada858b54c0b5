import { describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, useTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

const ctx = useTestApp();

const read = (token: string) => ctx().app.inject({ method: 'GET', url: '/api/developer/workspace', headers: bearer(token) });
const patch = (token: string, payload: object) => ctx().app.inject({ method: 'PATCH', url: '/api/developer/workspace', headers: bearer(token), payload });

const team = () =>
  seedWorkspace(ctx(), {
    members: [
      { key: 'admin', permissions: ['workspace.manage'], products: 'all' },
      { key: 'partnerAdmin', permissions: ['workspace.manage', 'partners.manage'], products: 'all' },
      { key: 'viewer', permissions: [], products: ['p1'] },
    ],
  });

describe('workspace settings', () => {
  it('are read by every member', async () => {
    const ws = await team();
    const res = await read(ws.tokens.viewer!);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id: ws.workspaceId,
      name: `Workspace ${ws.suffix}`,
      storefront_url: null,
      partner_programs_enabled: true,
      customer_portal_enabled: true,
      keep_serials_on_refund: false,
      customer_portal_url: `http://patchbay.test/portal/${ws.workspaceId}`,
    });
    expectProblem(await ctx().app.inject({ method: 'GET', url: '/api/developer/workspace' }), 401, 'UNAUTHENTICATED');
  });

  it('change what is sent, audited with before and after', async () => {
    const ws = await team();
    const res = await patch(ws.tokens.admin!, { name: 'Renamed Audio', storefront_url: 'https://shop.renamed.example' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Renamed Audio', storefront_url: 'https://shop.renamed.example', partner_programs_enabled: true });
    expect((await patch(ws.tokens.admin!, { storefront_url: null })).json()).toMatchObject({ name: 'Renamed Audio', storefront_url: null });
    const entries = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'workspace.settings_changed').selectAll().orderBy('id').execute();
    expect(entries.map((e) => e.data)).toEqual([
      { before: { name: `Workspace ${ws.suffix}`, storefront_url: null }, after: { name: 'Renamed Audio', storefront_url: 'https://shop.renamed.example' } },
      { before: { storefront_url: 'https://shop.renamed.example' }, after: { storefront_url: null } },
    ]);
  });

  it('turn partner programs off and on only with partners.manage too, and the programs close with them', async () => {
    const ws = await seedWorkspace(ctx(), {
      members: [
        { key: 'admin', permissions: ['workspace.manage'], products: 'all' },
        { key: 'partnerAdmin', permissions: ['workspace.manage', 'partners.manage', 'partners.view'], products: 'all' },
      ],
      programs: [{ key: 'pr', kind: 'affiliate', name: 'P', recipientEmail: `p-${Date.now()}@partner.test`, rateBps: 100, status: 'active' }],
    });
    expectProblem(await patch(ws.tokens.admin!, { partner_programs_enabled: false }), 403, 'FORBIDDEN');
    const off = await patch(ws.tokens.partnerAdmin!, { partner_programs_enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().partner_programs_enabled).toBe(false);
    const row = await ctx().database.db.selectFrom('workspaces').where('id', '=', ws.workspaceId).select('partner_programs_enabled').executeTakeFirstOrThrow();
    expect(row.partner_programs_enabled).toBe(false);
    expect((await patch(ws.tokens.partnerAdmin!, { partner_programs_enabled: true })).json().partner_programs_enabled).toBe(true);
  });

  it('keep serials on refund when switched on (default off), audited', async () => {
    const ws = await team();
    expectProblem(await patch(ws.tokens.viewer!, { keep_serials_on_refund: true }), 403, 'FORBIDDEN');
    const on = await patch(ws.tokens.admin!, { keep_serials_on_refund: true });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().keep_serials_on_refund).toBe(true);
    expect((await read(ws.tokens.viewer!)).json().keep_serials_on_refund).toBe(true);
    expect((await patch(ws.tokens.admin!, { keep_serials_on_refund: false })).json().keep_serials_on_refund).toBe(false);
    const entries = await ctx().database.db.selectFrom('audit_log').where('workspace_id', '=', ws.workspaceId).where('action', '=', 'workspace.settings_changed').selectAll().orderBy('id').execute();
    expect(entries.map((e) => e.data)).toEqual([
      { before: { keep_serials_on_refund: false }, after: { keep_serials_on_refund: true } },
      { before: { keep_serials_on_refund: true }, after: { keep_serials_on_refund: false } },
    ]);
  });

  it('need workspace.manage (403) and refuse bad input (400)', async () => {
    const ws = await team();
    expectProblem(await patch(ws.tokens.viewer!, { name: 'Nope' }), 403, 'FORBIDDEN');
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { storefront_url: 'ftp://x.example' }, { storefront_url: 'not a url' }, { partner_programs_enabled: 'yes' }, { keep_serials_on_refund: 'yes' }, { keep_serials_on_refund: null }, { id: 5 }]) {
      expectProblem(await patch(ws.owner, body), 400, 'VALIDATION_FAILED');
    }
    expect((await read(ws.owner)).json().name).toBe(`Workspace ${ws.suffix}`);
  });

  it('never reach another workspace: the workspace comes from the credential', async () => {
    const ws = await team();
    const other = await team();
    expectProblem(await ctx().app.inject({ method: 'PATCH', url: '/api/developer/workspace', headers: { ...bearer(ws.owner), 'x-workspace-id': String(other.workspaceId) }, payload: { name: 'Hijacked' } }), 403, 'WORKSPACE_ACCESS_DENIED');
    expect((await read(other.owner)).json().name).toBe(`Workspace ${other.suffix}`);
  });
});
