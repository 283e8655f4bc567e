import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import ts from 'typescript';

/** The environment variables a program's configuration class reads. */
export interface ConfigVariables {
  /** The class given to `loadConfig` (its base classes included below). */
  className: string;
  /** Variables without a default that the class does not mark `@IsOptional()`: boot fails without them. */
  required: string[];
  /** Every variable the class (or a base class) declares. */
  all: string[];
}

interface ClassRef {
  file: string;
  node: ts.ClassDeclaration;
}

/**
 * Reads which configuration class a program (e.g. apps/gateway/src/main.ts) passes to
 * `loadConfig`, and that class's variables, from the TypeScript sources (the syntax tree only:
 * no imports of app code, which the module boundaries keep out of tools, and no type checking).
 * Follows relative imports, the tsconfig path aliases, re-exports and `extends`.
 */
export function configVariablesOf(workspaceRoot: string, programFile: string): ConfigVariables {
  const reader = new SourceReader(workspaceRoot);
  const file = path.resolve(workspaceRoot, programFile);
  const className = loadConfigArgument(reader.parse(file), file);
  const required = new Map<string, boolean>();
  let ref: ClassRef | null = reader.resolveClass(file, className);
  const chain: ClassRef[] = [];
  while (ref) {
    chain.push(ref);
    const base = baseClassName(ref.node);
    ref = base ? reader.resolveClass(ref.file, base) : null;
  }
  // Base classes first, so that a subclass's redeclaration (with a default, say) wins.
  for (const { node } of chain.reverse()) {
    for (const member of node.members) {
      if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
      const optional =
        member.initializer !== undefined ||
        member.questionToken !== undefined ||
        decoratorNames(member).includes('IsOptional');
      required.set(member.name.text, !optional);
    }
  }
  return {
    className,
    required: [...required].filter(([, isRequired]) => isRequired).map(([name]) => name),
    all: [...required.keys()],
  };
}

const programs = new Map<string, ConfigVariables>();

/** The variables of the class apps/<service>/src/<program>.ts loads (each file read once). */
export function programConfigVariables(
  workspaceRoot: string,
  service: string,
  program: 'main' | 'migrate',
): ConfigVariables {
  const file = path.join(workspaceRoot, `apps/${service}/src/${program}.ts`);
  let config = programs.get(file);
  if (!config) {
    config = configVariablesOf(workspaceRoot, file);
    programs.set(file, config);
  }
  return config;
}

/** Where each config-loading call takes its config class: `loadConfig(Class)`, `startService(name, Class, …)`. */
const CONFIG_CLASS_ARGUMENT: Readonly<Record<string, number>> = { loadConfig: 0, startService: 1 };

function loadConfigArgument(source: ts.SourceFile, file: string): string {
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const position = CONFIG_CLASS_ARGUMENT[node.expression.text];
      if (position !== undefined) {
        const schema = node.arguments[position];
        if (!schema || !ts.isIdentifier(schema)) {
          throw new Error(`${file}: ${node.expression.text}'s config argument is not a class name`);
        }
        found.add(schema.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const [className] = found;
  if (found.size !== 1 || className === undefined) {
    throw new Error(
      `${file}: expected one loadConfig(Class) or startService call, found ${found.size}`,
    );
  }
  return className;
}

function baseClassName(node: ts.ClassDeclaration): string | null {
  for (const clause of node.heritageClauses ?? []) {
    if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
    const expression = clause.types[0]?.expression;
    if (expression && ts.isIdentifier(expression)) return expression.text;
    throw new Error(`${node.name?.text ?? 'a class'} extends something other than a class name`);
  }
  return null;
}

function decoratorNames(node: ts.PropertyDeclaration): string[] {
  return (ts.getDecorators(node) ?? []).flatMap((decorator) => {
    const call = decorator.expression;
    const callee = ts.isCallExpression(call) ? call.expression : call;
    return ts.isIdentifier(callee) ? [callee.text] : [];
  });
}

function isExported(node: ts.ClassDeclaration): boolean {
  return (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

class SourceReader {
  private readonly sources = new Map<string, ts.SourceFile>();
  private readonly aliases: Record<string, string[]>;

  constructor(private readonly workspaceRoot: string) {
    const tsconfig = JSON.parse(
      readFileSync(path.join(workspaceRoot, 'tsconfig.base.json'), 'utf8'),
    ) as { compilerOptions: { paths: Record<string, string[]> } };
    this.aliases = tsconfig.compilerOptions.paths;
  }

  parse(file: string): ts.SourceFile {
    let source = this.sources.get(file);
    if (!source) {
      source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      this.sources.set(file, source);
    }
    return source;
  }

  /** The class a name refers to in a file: declared there, or imported. */
  resolveClass(file: string, name: string): ClassRef {
    const source = this.parse(file);
    for (const statement of source.statements) {
      if (ts.isClassDeclaration(statement) && statement.name?.text === name) {
        return { file, node: statement };
      }
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) {
        continue;
      }
      const bindings = statement.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      for (const element of bindings.elements) {
        if (element.name.text !== name) continue;
        const imported = (element.propertyName ?? element.name).text;
        const found = this.resolveExport(
          this.resolveModule(file, statement.moduleSpecifier.text),
          imported,
        );
        if (found) return found;
      }
    }
    throw new Error(`${file}: cannot find the class ${name}`);
  }

  /** An exported class of a module, following `export { X } from` and `export * from`. */
  private resolveExport(file: string, name: string, seen = new Set<string>()): ClassRef | null {
    if (seen.has(file)) return null;
    seen.add(file);
    const source = this.parse(file);
    for (const statement of source.statements) {
      if (
        ts.isClassDeclaration(statement) &&
        statement.name?.text === name &&
        isExported(statement)
      ) {
        return { file, node: statement };
      }
    }
    for (const statement of source.statements) {
      if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier) continue;
      if (!ts.isStringLiteral(statement.moduleSpecifier)) continue;
      const target = this.resolveModule(file, statement.moduleSpecifier.text);
      const clause = statement.exportClause;
      if (!clause) {
        const found = this.resolveExport(target, name, seen);
        if (found) return found;
      } else if (ts.isNamedExports(clause)) {
        const element = clause.elements.find((candidate) => candidate.name.text === name);
        if (element) return this.resolveExport(target, (element.propertyName ?? element.name).text);
      }
    }
    return null;
  }

  private resolveModule(fromFile: string, specifier: string): string {
    const bases = specifier.startsWith('.')
      ? [path.resolve(path.dirname(fromFile), specifier)]
      : (this.aliases[specifier] ?? []).map((target) => path.join(this.workspaceRoot, target));
    for (const base of bases) {
      for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
        if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
      }
    }
    throw new Error(`${fromFile}: cannot resolve ${specifier} (only workspace sources are read)`);
  }
}
