// The architecture's import rules (docs/architecture.md, "Modules with a public face"), checked in CI by
// `npm run lint:deps`: a module is entered through its index.ts only, the platform knows no module,
// and nothing imports in a circle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: the modules in it can only be understood (and loaded) together. Move what both need down a layer.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'module-face-only',
      severity: 'error',
      comment: "A module imports another module's internals (its repository, service, schemas…): import what it exports from its index.ts instead.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'platform-knows-no-module',
      severity: 'error',
      comment: 'The platform (http, auth, db, jobs, mail…) is below the modules: it must not import one.',
      from: { path: '^src/platform/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'app-registers-faces',
      severity: 'error',
      comment: 'app.ts, the server and the CLI reach modules through their faces.',
      from: { path: '^src/(app|server|cli)(\\.ts$|/)' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
