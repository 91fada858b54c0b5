import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type RouteDefinition = Parameters<ReturnType<ReturnType<typeof SerializerSelector>>>[0];
type Serializer = (data: unknown) => string;

interface Entry {
  compile(): Serializer;
}

/**
 * Response definitions whose serializer has not been compiled yet (see compileAllSerializers), one set per app
 * (lazySerializerRegistry) while it is open: a closed app's definitions are dropped with it, so a process that builds
 * many apps (a test worker) neither keeps them nor compiles them.
 */
const openRegistries = new Set<Set<Entry>>();
/** Definitions made outside an app's registry (the bare factory below, as the unit tests use it). */
const unowned = new Set<Entry>();
openRegistries.add(unowned);

/**
 * Fastify's response serializers, compiled when a schema first answers instead of all when the app starts.
 *
 * Fastify compiles a fast-json-stringify serializer for every response schema of every route in `ready()`: well over
 * a thousand here, since every route documents its problem answers, and they were most of the server's start-up and
 * of every test file's app (over a second of CPU on a quiet machine). Each schema object is now compiled once, by the
 * first answer that uses it (the shared problem schema once for all routes); what is compiled is the same, so answers
 * are unchanged. `compileAllSerializers` compiles what is left, so a test still fails on a schema that cannot compile.
 */
export function lazySerializers(...factoryArgs: Parameters<ReturnType<typeof SerializerSelector>>): (route: RouteDefinition) => Serializer {
  return lazySerializersIn(unowned, factoryArgs);
}

/**
 * A registry of one app's lazy serializers: `factory` for the app's schema controller, `close` when the app closes
 * (its definitions no longer count for compileAllSerializers).
 */
export function lazySerializerRegistry(): { factory: typeof lazySerializers; close(): void } {
  const pending = new Set<Entry>();
  openRegistries.add(pending);
  return {
    factory: (...factoryArgs) => lazySerializersIn(pending, factoryArgs),
    close: () => {
      openRegistries.delete(pending);
      pending.clear();
    },
  };
}

function lazySerializersIn(pending: Set<Entry>, factoryArgs: Parameters<typeof lazySerializers>): (route: RouteDefinition) => Serializer {
  const compile = SerializerSelector()(...factoryArgs);
  const compiled = new WeakMap<object, Serializer>();
  return (route) => {
    const key = (route.schema ?? route) as object;
    let serializer: Serializer | undefined;
    const entry: Entry = {
      compile(): Serializer {
        serializer ??= compiled.get(key);
        if (!serializer) {
          serializer = compile(route);
          compiled.set(key, serializer);
        }
        pending.delete(entry);
        return serializer;
      },
    };
    pending.add(entry);
    return (data) => (serializer ?? entry.compile())(data);
  };
}

/** Compiles every serializer not compiled yet; throws the first schema's error. For tests. */
export function compileAllSerializers(): number {
  const entries = [...openRegistries].flatMap((pending) => [...pending]);
  for (const entry of entries) entry.compile();
  return entries.length;
}
