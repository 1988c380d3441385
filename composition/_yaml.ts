/**
 * YAML reading and writing for config files: syntax errors, duplicate keys and unknown tags are refused with the
 * file and line; `!env`/`!setting` become {@linkcode ConfigTag} values; positions stay available for errors.
 *
 * @module
 */
import {
  type Alias,
  Document,
  isNode,
  isScalar,
  LineCounter,
  type Node as YamlNode,
  parseDocument,
  type ScalarTag,
  visit,
} from "yaml";
import { TerretError } from "./errors.ts";
import { ConfigTag, type ConfigTagKind } from "./config_tag.ts";

/** A parsed config file: its plain value and a way to find the line of any key path in it. */
export interface YamlFile {
  /** The file path or URL, as given. */
  readonly file: string;
  /** The document as plain data (maps are plain objects, `!env`/`!setting` are {@linkcode ConfigTag}s). */
  readonly value: unknown;
  /** The 1-based line of the deepest existing node on `path` (line 1 for an empty path or document). */
  line(path: readonly (string | number)[]): number;
}

const CORE_TAGS = new Set([
  "tag:yaml.org,2002:str",
  "tag:yaml.org,2002:int",
  "tag:yaml.org,2002:float",
  "tag:yaml.org,2002:bool",
  "tag:yaml.org,2002:null",
  "tag:yaml.org,2002:map",
  "tag:yaml.org,2002:seq",
  "!env",
  "!setting",
]);

function tagDefinition(kind: ConfigTagKind): ScalarTag {
  return {
    tag: `!${kind}`,
    identify: (value) => value instanceof ConfigTag && value.kind === kind,
    resolve(text, onError) {
      try {
        return new ConfigTag(kind, text.trim());
      } catch (error) {
        onError((error as Error).message.replace(/^Cannot read tag/, "invalid tag"));
        return text;
      }
    },
    stringify: (item) => (item.value as ConfigTag).name,
  };
}

const CUSTOM_TAGS: ScalarTag[] = [tagDefinition("env"), tagDefinition("setting")];

/**
 * Parses a config file.
 *
 * @throws {TerretError} `ConfigSyntax` naming the file, line and column of the first problem
 */
export function readYaml(text: string, file: string): YamlFile {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    customTags: CUSTOM_TAGS,
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
    merge: false,
  });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem !== undefined) {
    // An error found at the end of the input (an unclosed bracket) is reported on the last line that has text,
    // not on the empty line after the final newline.
    const end = text.trimEnd().length;
    const pos = lines.linePos(Math.max(0, Math.min(problem.pos[0], end - 1)));
    const detail =
      problem.code === "TAG_RESOLVE_FAILED" && problem.message.startsWith("Unresolved tag")
        ? `${
          problem.message.replace(/^Unresolved tag: (\S+).*$/s, 'unknown tag "$1"')
        } (only !env and !setting are allowed)`
        : firstLine(problem.message);
    throw syntax(file, pos.line, pos.col, detail);
  }
  visit(doc, (_key, node) => {
    if (!isNode(node) || node.tag === undefined || CORE_TAGS.has(node.tag)) return;
    const pos = lines.linePos(node.range?.[0] ?? 0);
    throw syntax(
      file,
      pos.line,
      pos.col,
      `unknown tag "${
        node.tag.replace(/^tag:yaml\.org,2002:/, "!!")
      }" (only !env and !setting are allowed)`,
    );
  });
  checkAliases(doc, lines, file);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const alias = firstAlias(doc);
    const pos = lines.linePos(alias?.range?.[0] ?? 0);
    const detail = error instanceof ReferenceError && /alias count/i.test(error.message)
      ? "too many aliases expand here (more than 100 per anchor: an alias bomb); write the values out"
      : `the aliases cannot be expanded (${(error as Error).message})`;
    throw syntax(file, pos.line, pos.col, detail);
  }
  return {
    file,
    value,
    line(path) {
      for (let depth = path.length; depth > 0; depth--) {
        const node = doc.getIn(path.slice(0, depth), true) as YamlNode | undefined;
        if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
      }
      return isNode(doc.contents) && doc.contents.range
        ? lines.linePos(doc.contents.range[0]).line
        : 1;
    },
  };
}

/** Refuses an alias used inside the node its anchor names (`a: &a [*a]`): expanding it never ends. */
function checkAliases(doc: Document, lines: LineCounter, file: string): void {
  visit(doc, {
    Alias(_key, alias, path) {
      const source = alias.resolve(doc);
      if (source === undefined) return;
      if (path.some((ancestor) => ancestor === source)) {
        const pos = lines.linePos(alias.range?.[0] ?? 0);
        throw syntax(
          file,
          pos.line,
          pos.col,
          `the alias "*${alias.source}" is used inside its own anchor "&${alias.source}" (a recursive alias)`,
        );
      }
    },
  });
}

function firstAlias(doc: Document): Alias | undefined {
  let found: Alias | undefined;
  visit(doc, {
    Alias(_key, alias) {
      found = alias;
      return visit.BREAK;
    },
  });
  return found;
}

/** A comment attached before a node when rendering. */
export interface YamlComment {
  /** Key path of the node (`["rows", 0]`). */
  readonly path: readonly (string | number)[];
  /** The comment text (each line is prefixed with `# `). */
  readonly text: string;
}

/** Renders `value` as YAML, tags as tags, with comments before the given nodes and a header comment. */
export function renderYaml(
  value: unknown,
  header: string,
  comments: readonly YamlComment[],
): string {
  const doc = new Document(value, { customTags: CUSTOM_TAGS });
  doc.commentBefore = prefix(header);
  for (const comment of comments) {
    const node = doc.getIn(comment.path, true);
    if (isNode(node) && !isScalar(node)) node.commentBefore = prefix(comment.text);
  }
  return doc.toString({ lineWidth: 0 });
}

function prefix(text: string): string {
  return text.split("\n").map((line) => ` ${line}`).join("\n");
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
}

function syntax(file: string, line: number, col: number, detail: string): TerretError {
  return new TerretError(
    "ConfigSyntax",
    `Cannot read "${file}": line ${line}, column ${col}: ${detail}`,
    { details: { file, line, column: col } },
  );
}
