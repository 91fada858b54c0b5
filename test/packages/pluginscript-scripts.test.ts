import crypto from 'node:crypto';
import vm from 'node:vm';
import fc from 'fast-check';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { renderTemplates, TEMPLATE_VERSION, type TemplateValues } from '../../src/modules/packages/package-templates.js';

/*
 * The script package's own code, on its own: PatchbayEd25519.js against node's crypto (SHA-512 and Ed25519, RFC 8032
 * vectors and random keys), and every script kept inside the JavaScript subset HISE's engine runs.
 */

const values: TemplateValues = {
  variant: 'pluginscript',
  templateVersion: TEMPLATE_VERSION,
  productId: 1,
  productName: 'Test Synth',
  appId: 'app_test',
  productKey: 'pk_test',
  environment: 'live',
  licensingBaseUrl: 'https://patchbay.test/api/licensing/v1',
  jwksJson: '{"keys":[]}',
  offlineGraceDays: 14,
  offlineGraceSeconds: 14 * 86_400,
  experienceMode: 'validation-only',
  uiWidth: 600,
  uiHeight: 400,
  releaseChannel: 'stable',
  storefrontUrl: '',
};
const scripts = new Map(renderTemplates(values).filter((f) => f.path.endsWith('.js')).map((f) => [f.path, f.content.toString('utf8')]));

interface Ed25519 {
  sha512(bytes: number[]): number[];
  verify(signature: number[], message: number[], publicKey: number[]): boolean;
}
const context = vm.createContext({});
new vm.Script(scripts.get('Scripts/PatchbayEd25519.js')!, { filename: 'PatchbayEd25519.js' }).runInContext(context);
const ed = (context as { PatchbayEd25519: Ed25519 }).PatchbayEd25519;

const bytes = (b: Uint8Array | Buffer) => [...b];
const hex = (h: string) => [...Buffer.from(h, 'hex')];
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

function keyFromSeed(seedHex: string) {
  const seed = Buffer.from(seedHex, 'hex');
  // PKCS#8 for an Ed25519 seed: the fixed prefix of RFC 8410, then the 32 bytes.
  const privateKey = crypto.createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const publicKey = Buffer.from(crypto.createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
  return { privateKey, publicKey };
}

describe('PatchbayEd25519.js', () => {
  it('hashes like SHA-512 at every length around the block and padding boundaries', () => {
    for (const length of [0, 1, 55, 111, 112, 113, 127, 128, 129, 239, 240, 255, 256, 300, 450]) {
      const input = crypto.randomBytes(length);
      expect(Buffer.from(ed.sha512(bytes(input))).toString('hex'), `length ${length}`).toBe(crypto.createHash('sha512').update(input).digest('hex'));
    }
  });

  it('verifies the signatures of RFC 8032 section 7.1 and nothing changed from them', () => {
    const vectors = [
      {
        secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
        publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
        message: '',
        signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
      },
      {
        secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
        publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
        message: '72',
        signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
      },
    ];
    for (const v of vectors) {
      const { privateKey, publicKey } = keyFromSeed(v.secret);
      expect(publicKey.toString('hex')).toBe(v.publicKey);
      expect(crypto.sign(null, Buffer.from(v.message, 'hex'), privateKey).toString('hex')).toBe(v.signature);
      expect(ed.verify(hex(v.signature), hex(v.message), hex(v.publicKey))).toBe(true);
      const flipped = hex(v.signature);
      flipped[0] = flipped[0]! ^ 1;
      expect(ed.verify(flipped, hex(v.message), hex(v.publicKey))).toBe(false);
    }
  });

  it('agrees with node’s crypto on random keys and messages, and refuses a changed message, signature or key', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 400 }), fc.nat(511), (seed, message, bit) => {
        const { privateKey, publicKey } = keyFromSeed(Buffer.from(seed).toString('hex'));
        const signature = bytes(crypto.sign(null, message, privateKey));
        expect(ed.verify(signature, bytes(message), bytes(publicKey))).toBe(true);
        const changed = signature.slice();
        changed[bit >> 3] = changed[bit >> 3]! ^ (1 << (bit & 7));
        expect(ed.verify(changed, bytes(message), bytes(publicKey))).toBe(false);
        const other = bytes(message.length ? message : new Uint8Array([0]));
        other[0] = other[0]! ^ 0x80;
        expect(ed.verify(signature, other, bytes(publicKey))).toBe(false);
        const otherKey = bytes(keyFromSeed(crypto.randomBytes(32).toString('hex')).publicKey);
        expect(ed.verify(signature, bytes(message), otherKey)).toBe(false);
      }),
      { numRuns: 6 },
    );
  });

  it('refuses a malleable S (S + L) and a public key that is not a point of the curve', () => {
    const { privateKey, publicKey } = keyFromSeed('11'.repeat(32));
    const message = Buffer.from('license');
    const signature = crypto.sign(null, message, privateKey);
    let s = 0n;
    for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(signature[32 + i]!);
    const bigger = s + L;
    const malleable = Buffer.from(signature);
    for (let i = 0; i < 32; i++) malleable[32 + i] = Number((bigger >> BigInt(8 * i)) & 0xffn);
    expect(ed.verify(bytes(signature), bytes(message), bytes(publicKey))).toBe(true);
    expect(ed.verify(bytes(malleable), bytes(message), bytes(publicKey))).toBe(false);

    // y = 2 has no x on the curve: (y^2 - 1) / (d y^2 + 1) is not a square mod p.
    const notAPoint = [2, ...new Array<number>(31).fill(0)];
    expect(ed.verify(bytes(signature), bytes(message), notAPoint)).toBe(false);
    expect(ed.verify(bytes(signature).slice(0, 63), bytes(message), bytes(publicKey))).toBe(false);
  });
});

/**
 * HISE's script engine is not a full JavaScript engine: it refuses bitwise operators on fractional numbers, computes
 * `%` in 32 bits, and the scripts are written so that callbacks reach their state through globals. A script that
 * leaves the subset would pass in node:vm and fail in a plugin, so the subset is checked here.
 */
describe('pluginscript package: the scripts stay in the subset HISE runs', () => {
  const BITWISE = new Set([
    ts.SyntaxKind.AmpersandToken,
    ts.SyntaxKind.BarToken,
    ts.SyntaxKind.CaretToken,
    ts.SyntaxKind.LessThanLessThanToken,
    ts.SyntaxKind.GreaterThanGreaterThanToken,
    ts.SyntaxKind.GreaterThanGreaterThanGreaterThanToken,
    ts.SyntaxKind.PercentToken,
    ts.SyntaxKind.AmpersandEqualsToken,
    ts.SyntaxKind.BarEqualsToken,
    ts.SyntaxKind.CaretEqualsToken,
    ts.SyntaxKind.PercentEqualsToken,
    ts.SyntaxKind.LessThanLessThanEqualsToken,
    ts.SyntaxKind.GreaterThanGreaterThanEqualsToken,
    ts.SyntaxKind.GreaterThanGreaterThanGreaterThanEqualsToken,
    ts.SyntaxKind.TildeToken,
  ]);

  /** What a script does outside the subset, as "line: what". */
  function outsideSubset(name: string, source: string): string[] {
    const file = ts.createSourceFile(name, source, ts.ScriptTarget.ES5, true, ts.ScriptKind.JS);
    const problems: string[] = [];
    const at = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    const visit = (node: ts.Node, functionDepth: number) => {
      const isFunction = ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node) || ts.isArrowFunction(node);
      if (ts.isArrowFunction(node)) problems.push(`${at(node)}: arrow function`);
      if (isFunction && functionDepth > 0) problems.push(`${at(node)}: function inside a function (a closure)`);
      if (node.kind === ts.SyntaxKind.ThisKeyword) problems.push(`${at(node)}: this`);
      if (ts.isNewExpression(node)) problems.push(`${at(node)}: new`);
      if (ts.isVariableDeclarationList(node) && node.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) problems.push(`${at(node)}: let/const`);
      if (ts.isRegularExpressionLiteral(node) || ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node)) problems.push(`${at(node)}: ${ts.SyntaxKind[node.kind]}`);
      if ((ts.isBinaryExpression(node) && BITWISE.has(node.operatorToken.kind)) || (ts.isPrefixUnaryExpression(node) && BITWISE.has(node.operator))) {
        problems.push(`${at(node)}: bitwise or % operator`);
      }
      ts.forEachChild(node, (child) => visit(child, functionDepth + (isFunction ? 1 : 0)));
    };
    visit(file, 0);
    const syntax = (file as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics;
    for (const d of syntax) problems.push(`syntax: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    return problems;
  }

  it('uses var and named functions only, no this, new, closures, regular expressions, bitwise operators or %', () => {
    expect([...scripts.keys()]).toEqual(['Scripts/PatchbayEd25519.js', 'Scripts/PatchbayHise.js', 'Scripts/PatchbayLicense.js', 'Scripts/PatchbayOffline.js']);
    for (const [name, source] of scripts) expect(outsideSubset(name, source), name).toEqual([]);
    expect(outsideSubset('probe.js', 'var f = function() { var g = function() { return this.x % 2; }; };')).toEqual([
      '1: function inside a function (a closure)',
      '1: bitwise or % operator',
      '1: this',
    ]);
  });
});
