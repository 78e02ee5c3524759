// The house drawn from main/'s imports (docs/design.md "Rooms"): every way one module reaches another
// (import and export … from, `import type`, dynamic import(), require(), import x = require()) keeps the
// room order of eslint.config.js, and the imports between main/'s modules (types too) form no circle.
// eslint's no-restricted-imports sees static imports only; this sees them all.
// Usage: node scripts/lint-layers.mjs [ROOT]  (exit 1 on a finding; each finding names its file and line)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { mainRooms } from './main-rooms.mjs';

/** Every .ts file under `dir`, as absolute paths. */
function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The module specifiers a file names: { spec, line, typeOnly, how }. */
export function moduleRefs(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const refs = [];
  const add = (node, lit, typeOnly, how) => {
    if (lit && ts.isStringLiteralLike(lit))
      refs.push({ spec: lit.text, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1, typeOnly, how });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : [];
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node, node.moduleSpecifier, typeOnly, 'import');
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      add(node, node.moduleSpecifier, node.isTypeOnly, 'export … from');
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly, 'import = require');
    } else if (ts.isCallExpression(node)) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0], false, 'import()');
      else if (ts.isIdentifier(node.expression) && node.expression.text === 'require')
        add(node, node.arguments[0], false, 'require()');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, true, 'import type()');
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

/** A relative specifier resolved to a .ts file, or null (a package, or not found). */
function resolveSpec(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(js|mjs|ts)$/, '');
  for (const p of [`${stem}.ts`, join(base, 'index.ts'), base]) if (existsSync(p) && statSync(p).isFile()) return p;
  return null;
}

/** main/'s room of a file: its first folder under main/, or '.' for main/'s top modules. */
function roomOf(mainDir, file) {
  const parts = relative(mainDir, file).split(sep);
  return parts.length === 1 ? '.' : parts[0];
}

/** Strongly connected components of size > 1 (Tarjan), each as a sorted list of nodes. */
export function circles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

/** Findings for main/ under `root`: room-order breaks, runtimes outside their room, and circles. */
export function lintLayers(root) {
  const mainDir = join(root, 'main');
  const findings = [];
  const graph = new Map();
  for (const file of tsFiles(mainDir)) {
    const rel = relative(root, file);
    const room = roomOf(mainDir, file);
    const at = mainRooms.indexOf(room);
    const edges = new Set();
    for (const ref of moduleRefs(file, readFileSync(file, 'utf8'))) {
      const where = `${rel}:${ref.line}`;
      if (/(^|\/)(renderer|preload)(\/|$)/.test(ref.spec))
        findings.push(`${where}: ${ref.how} '${ref.spec}': main/ never imports renderer or preload`);
      if (ref.spec === 'electron' && room !== 'electron')
        findings.push(`${where}: ${ref.how} 'electron': only main/electron/ imports electron`);
      if (ref.spec === 'onnxruntime-node' && rel !== join('main', 'engine', 'ort.ts'))
        findings.push(`${where}: ${ref.how} 'onnxruntime-node': only main/engine/ort.ts imports it`);
      const target = resolveSpec(file, ref.spec);
      if (!target || !target.startsWith(mainDir + sep)) continue;
      const to = roomOf(mainDir, target);
      if (mainRooms.indexOf(to) > at)
        findings.push(
          `${where}: ${ref.how} '${ref.spec}': main/${room === '.' ? '' : `${room}/`} imports only the rooms before it, never ${to}`,
        );
      edges.add(target);
    }
    graph.set(file, edges);
  }
  for (const comp of circles(graph))
    findings.push(`circle of imports: ${comp.map((f) => relative(root, f)).join(' → ')}`);
  return findings;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const findings = lintLayers(root);
  for (const f of findings) console.error(f);
  if (findings.length) console.error(`lint-layers: ${findings.length} finding(s) in main/'s imports`);
  process.exit(findings.length ? 1 : 0);
}
