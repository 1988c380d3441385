// deno-lint-ignore-file no-console
/**
 * Enforces the one-way layering: kernel ← core ← exec ← interfaces (read "is imported by"). The kernel imports no
 * other member; core imports only the kernel; exec imports kernel and core; interfaces import anything below them
 * but never each other (except the CLI, which composes everything).
 *
 * Run: deno run -A tools/layers.ts
 *
 * @module
 */
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

const allowed: Record<string, readonly string[]> = {
  kernel: [],
  core: ["@terret/hames"],
  exec: ["@terret/hames", "@terret/core"],
  "interfaces/ws": ["@terret/hames", "@terret/core"],
  // ACP routes the fs and shell seams through the editor (client_fs, client_terminal) over exec's containment.
  "interfaces/acp": ["@terret/hames", "@terret/core", "@terret/exec"],
  "interfaces/cli": [
    "@terret/hames",
    "@terret/core",
    "@terret/exec",
    "@terret/ws",
    "@terret/acp",
    "@terret/terret",
  ],
};
const dirs: Record<string, string> = {
  "@terret/hames": "kernel",
  "@terret/core": "core",
  "@terret/exec": "exec",
  "@terret/ws": "interfaces/ws",
  "@terret/acp": "interfaces/acp",
  "@terret/cli": "interfaces/cli",
};

const problems: string[] = [];
for (const [member, imports] of Object.entries(allowed)) {
  for await (const file of walk(`${root}${member}`)) {
    if (file.endsWith("_test.ts")) continue;
    const text = await Deno.readTextFile(file);
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      const specifier = match[1]!;
      const target = specifier.startsWith("@terret/")
        ? specifier.split("/").slice(0, 2).join("/")
        : undefined;
      if (target !== undefined && !imports.includes(target) && dirs[target] !== member) {
        problems.push(
          `${file.slice(root.length)} imports ${specifier}, which ${member} must not depend on`,
        );
      }
      if (specifier.startsWith("../")) {
        const resolved = fileURLToPath(new URL(specifier, pathToFileURL(file))).slice(root.length);
        if (!resolved.startsWith(`${member}/`)) {
          problems.push(`${file.slice(root.length)} reaches outside its package with ${specifier}`);
        }
      }
    }
  }
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  Deno.exit(1);
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && entry.name !== "node_modules") yield* walk(path);
    else if (entry.isFile && path.endsWith(".ts")) yield path;
  }
}
