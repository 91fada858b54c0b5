import vm from 'node:vm';

/**
 * Runs the generated script package the way a plugin would: PatchbayLicense.js inside its own
 * JavaScript realm (node:vm), with the host functions it documents implemented here. HTTP is real
 * (fetch to the live test server, or to a closed port while "offline"), settings are a JSON text
 * in memory (like a file on disk), and the clock is whatever the test sets.
 */

export interface LicenseResult {
  ok: boolean;
  code: string;
  detail: string;
  licensed: boolean;
}

export interface LicenseStatus {
  licensed: boolean;
  allowsUse: boolean;
  enforced: boolean;
  code: string;
  detail: string;
  serial: string;
  licensedUntil: number;
  lastValidatedAt: number;
  tokenKeyPinned: boolean;
  requestsPending: number;
  busy: boolean;
}

/** What machineRequest hands its callback: the request file's text and a file name besides the result. */
export interface RequestResult extends LicenseResult {
  request: string;
  filename: string;
}

interface PackageConfig {
  appId: string;
  productKey: string;
  licensingBaseUrl: string;
  offlineGraceSeconds: number;
  experienceMode: string;
  storefrontUrl: string;
}

/** The script's own object, as seen from the test (its functions run in the script's realm). */
interface LicenseApi {
  config: PackageConfig;
  jwks: { keys: Array<{ kid: string }> };
  setHost(host: unknown): void;
  start(done: (r: LicenseResult) => void): void;
  activate(serial: string, done: (r: LicenseResult) => void): void;
  validate(done: (r: LicenseResult) => void): void;
  deactivate(done: (r: LicenseResult) => void): void;
  machineRequest(serial: string, done: (r: RequestResult) => void): void;
  loadLicenseFile(text: string, done: (r: LicenseResult) => void): void;
  isLicensed(): boolean;
  allowsUse(): boolean;
  /** Recomputes the cached answers real-time code reads (licensedNow, allowsUseNow). */
  refresh(): boolean;
  licensedNow: boolean;
  allowsUseNow: boolean;
  status(): LicenseStatus;
}

export interface Network {
  /** Origin of the live test server, e.g. http://127.0.0.1:4321. */
  live: string;
  /** An origin where nothing listens (connections are refused). */
  closed: string;
}

/** The request URL: the package's licensing path on the live (or closed) origin. */
export function runtimeUrl(licensingBaseUrl: string, origin: string, path: string): string {
  return `${origin}${new URL(licensingBaseUrl).pathname.replace(/\/$/, '')}/${path}`;
}

/** JSON round trip: the script's objects come from another realm; tests compare plain data. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** The package's scripts in the order a host loads them (PatchbayHise.js includes them so). */
export const LICENSE_SCRIPTS = ['Scripts/PatchbayEd25519.js', 'Scripts/PatchbayLicense.js', 'Scripts/PatchbayOffline.js'];

export class PluginMachine {
  online = true;
  /** What the settings file holds (host.save writes JSON text, host.load parses it). */
  settings: string | null = null;
  /** Headers of the last request the host sent. */
  lastHeaders: Record<string, string> = {};
  /** How many HTTP requests the script made. */
  posts = 0;
  /** What host.info() names this computer ('' leaves machineName out). */
  machineName = '';
  readonly license: LicenseApi;

  constructor(
    files: Map<string, string>,
    readonly machineId: string,
    private readonly network: Network,
    public nowMs: number,
  ) {
    const context = vm.createContext({});
    for (const name of LICENSE_SCRIPTS) new vm.Script(files.get(name)!, { filename: name }).runInContext(context);
    this.license = (context as { PatchbayLicense: LicenseApi }).PatchbayLicense;
    this.license.setHost(this.host());
  }

  get config(): PackageConfig {
    return this.license.config;
  }

  advance(ms: number): void {
    this.nowMs += ms;
  }

  start = () => this.call((done) => this.license.start(done));
  activate = (serial: string) => this.call((done) => this.license.activate(serial, done));
  validate = () => this.call((done) => this.license.validate(done));
  deactivate = () => this.call((done) => this.license.deactivate(done));
  machineRequest = (serial: string) => new Promise<RequestResult>((resolve) => this.license.machineRequest(serial, (r) => resolve(plain(r))));
  loadLicenseFile = (text: string) => this.call((done) => this.license.loadLicenseFile(text, done));
  isLicensed = () => this.license.isLicensed();
  status = () => plain(this.license.status());

  private call(run: (done: (r: LicenseResult) => void) => void): Promise<LicenseResult> {
    return new Promise((resolve) => run((result) => resolve(plain(result))));
  }

  private host() {
    return {
      post: (path: string, body: unknown, callback: (status: number, response: unknown) => void) => {
        void this.post(path, body).then(({ status, response }) => callback(status, response));
      },
      now: () => this.nowMs,
      load: () => (this.settings === null ? undefined : JSON.parse(this.settings)),
      save: (record: unknown) => {
        this.settings = JSON.stringify(record);
      },
      machineId: () => this.machineId,
      info: () => ({ platform: 'linux', appVersion: '1.0.0-test', ...(this.machineName ? { machineName: this.machineName } : {}) }),
    };
  }

  private async post(path: string, body: unknown): Promise<{ status: number; response: unknown }> {
    const url = runtimeUrl(this.config.licensingBaseUrl, this.online ? this.network.live : this.network.closed, path);
    this.posts++;
    this.lastHeaders = { 'content-type': 'application/json', 'x-product-key': this.config.productKey };
    try {
      const res = await fetch(url, { method: 'POST', headers: this.lastHeaders, body: JSON.stringify(body) });
      const response: unknown = await res.json().catch(() => ({}));
      return { status: res.status, response };
    } catch {
      return { status: 0, response: {} };
    }
  }
}

/**
 * A stand-in for the parts of HISE that PatchbayHise.js uses, recording what the script does.
 * `Server.callWithPOST` sends real HTTP the way HISE does: to the base URL plus the sub URL (with a
 * trailing slash unless disabled), the header text split into headers, a text body sent as is.
 */
export class FakeHise {
  baseUrl = '';
  trailingSlash = true;
  headerText = '';
  readonly posts: Array<{ url: string; body: string; headers: Record<string, string>; status: number }> = [];
  readonly opened: string[] = [];
  readonly files = new Map<string, string>();
  readonly panels = new Map<string, FakePanel>();
  textInput: { properties: Record<string, unknown>; callback: (ok: boolean, text: string) => void } | null = null;
  /** The file browser the script opened last (FileSystem.browse), until the test picks a file. */
  browsing: { start: unknown; forSaving: boolean; wildcard: string; callback: (file: unknown) => void } | null = null;
  timer: { callback?: () => void; intervalMs?: number } = {};
  private inflight = 0;

  constructor(
    private readonly network: Network,
    public nowMs: number,
    readonly systemId = 'hise-machine-0001',
  ) {}

  /** Runs PatchbayHise.js (which includes PatchbayLicense.js) with these globals. */
  load(scripts: Map<string, string>): vm.Context {
    const context = vm.createContext(this.globals());
    (context as { include: (name: string) => void }).include = (name: string) => {
      const source = scripts.get(`Scripts/${name}`);
      if (source === undefined) throw new Error(`include: no Scripts/${name}`);
      new vm.Script(source, { filename: `Scripts/${name}` }).runInContext(context);
    };
    new vm.Script(scripts.get('Scripts/PatchbayHise.js')!, { filename: 'Scripts/PatchbayHise.js' }).runInContext(context);
    return context;
  }

  private fileOf: (path: string) => Record<string, unknown> = () => ({});

  /** The user picks `path` in the file browser the script opened. */
  choose(path: string): void {
    const browsing = this.browsing;
    if (!browsing) throw new Error('no file browser is open');
    this.browsing = null;
    browsing.callback(this.fileOf(path));
  }

  /** Resolves when no request of the script is in flight any more. */
  async settled(): Promise<void> {
    for (let i = 0; i < 200 && this.inflight > 0; i++) await new Promise((r) => setTimeout(r, 10));
    if (this.inflight > 0) throw new Error('HISE request still in flight');
  }

  private globals(): Record<string, unknown> {
    const fileOf = (path: string): Record<string, unknown> => ({
      path,
      isFile: () => this.files.has(path),
      loadAsObject: () => JSON.parse(this.files.get(path)!),
      loadAsString: () => this.files.get(path) ?? '',
      writeObject: (value: unknown) => {
        this.files.set(path, JSON.stringify(value));
        return true;
      },
      writeString: (text: string) => {
        this.files.set(path, String(text));
        return true;
      },
      getChildFile: (name: string) => fileOf(`${path}/${name}`),
    });
    this.fileOf = fileOf;
    return {
      trace: (value: unknown) => JSON.stringify(value),
      Console: { print: () => undefined },
      Server: {
        setBaseURL: (url: string) => {
          this.baseUrl = url;
        },
        setEnforceTrailingSlash: (flag: boolean) => {
          this.trailingSlash = flag;
        },
        setHttpHeader: (text: string) => {
          this.headerText = text;
        },
        callWithPOST: (subUrl: string, parameters: unknown, callback: (status: number, response: unknown) => void) => {
          if (typeof parameters !== 'string') throw new Error('the fake HISE only takes text bodies (objects would become URL parameters)');
          const slash = this.trailingSlash && !subUrl.includes('.') && !subUrl.endsWith('/') ? '/' : '';
          const url = runtimeUrl(this.baseUrl, this.network.live, `${subUrl}${slash}`);
          const headers: Record<string, string> = {};
          for (const line of this.headerText.split('\r\n')) {
            const at = line.indexOf(':');
            if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
          }
          this.inflight++;
          void (async () => {
            let status = 0;
            let response: unknown = {};
            try {
              const res = await fetch(url, { method: 'POST', headers, body: parameters });
              status = res.status;
              response = await res.json().catch(() => ({}));
            } catch {
              status = 0;
            }
            this.posts.push({ url, body: parameters, headers, status });
            try {
              callback(status, response);
            } finally {
              this.inflight--;
            }
          })();
        },
      },
      FileSystem: {
        AppData: 3,
        Desktop: 5,
        getFolder: (location: number) => fileOf(`folder:${location}`),
        getSystemId: () => this.systemId,
        browse: (start: unknown, forSaving: boolean, wildcard: string, callback: (file: unknown) => void) => {
          this.browsing = { start, forSaving, wildcard, callback };
        },
      },
      Date: { getSystemTimeMs: () => this.nowMs },
      Engine: {
        getOS: () => 'LINUX',
        getVersion: () => '1.0.0',
        openWebsite: (url: string) => {
          this.opened.push(url);
        },
        createTimerObject: () => ({
          setTimerCallback: (callback: () => void) => {
            this.timer.callback = callback;
          },
          startTimer: (ms: number) => {
            this.timer.intervalMs = ms;
          },
          stopTimer: () => undefined,
        }),
      },
      Content: {
        addPanel: (name: string, x: number, y: number) => {
          const panel = new FakePanel(name, x, y);
          this.panels.set(name, panel);
          return panel;
        },
        showModalTextInput: (properties: Record<string, unknown>, callback: (ok: boolean, text: string) => void) => {
          this.textInput = { properties, callback };
        },
      },
    };
  }
}

export class FakePanel {
  readonly properties: Record<string, unknown> = {};
  visible = true;
  paintRoutine: ((g: unknown) => void) | null = null;
  mouseCallback: ((event: Record<string, unknown>) => void) | null = null;
  repaints = 0;

  constructor(
    readonly name: string,
    readonly x: number,
    readonly y: number,
  ) {}

  set(key: string, value: unknown) {
    this.properties[key] = value;
  }
  get(key: string) {
    return this.properties[key];
  }
  setPaintRoutine(routine: (g: unknown) => void) {
    this.paintRoutine = routine;
  }
  setMouseCallback(callback: (event: Record<string, unknown>) => void) {
    this.mouseCallback = callback;
  }
  showControl(visible: boolean) {
    this.visible = visible;
  }
  repaint() {
    this.repaints++;
  }

  /** Runs the paint routine against a recording Graphics object; returns the texts drawn. */
  paint(): string[] {
    const texts: string[] = [];
    const graphics = new Proxy(
      {},
      {
        get: (_target, method: string) => (...args: unknown[]) => {
          if (method === 'drawAlignedText' || method === 'drawText') texts.push(String(args[0]));
        },
      },
    );
    this.paintRoutine?.(graphics);
    return texts;
  }

  click(x: number, y: number) {
    this.mouseCallback?.({ clicked: true, x, y });
  }
}
