// deno-lint-ignore-file no-console
/**
 * The project's checks, in order: formatting, lint, type check of every module, every JSDoc example run (type
 * checked and executed, as `deno test --doc` does), `deno publish --dry-run` for
 * every workspace member (slow types, licenses, versions), the layering rule, and catalog drift.
 * Exits non-zero on the first failure.
 *
 * Run: deno task check
 *
 * @module
 */
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as { workspace: string[] };
const members = [".", ...config.workspace];

const steps: { name: string; cwd: string; args: string[] }[] = [
  { name: "fmt", cwd: root, args: ["fmt", "--check"] },
  { name: "lint", cwd: root, args: ["lint"] },
  // Everything but the benchmarks against the root lockfile (what `trt serve` installs from); the benchmarks, which
  // compare against packages nothing else needs, against their own (bench/deno.lock).
  { name: "type check", cwd: root, args: ["check", ...await topLevelExcept(["bench"])] },
  { name: "type check (bench)", cwd: root, args: ["check", "--lock=bench/deno.lock", "bench/"] },
  {
    name: "doc examples",
    cwd: root,
    args: ["test", "-A", "--doc", "--permit-no-files", ...await documentedModules(members)],
  },
  ...members.map((member) => ({
    name: `publish dry run (${member})`,
    cwd: `${root}${member}`,
    args: ["publish", "--dry-run", "--allow-dirty", "--quiet"],
  })),
  { name: "layering", cwd: root, args: ["run", "-A", "tools/layers.ts"] },
  { name: "catalog drift", cwd: root, args: ["run", "-A", "tools/catalog.ts", "--check"] },
];

/** The top-level files and folders of the repository except `skip` and hidden ones. */
async function topLevelExcept(skip: readonly string[]): Promise<string[]> {
  const entries: string[] = [];
  for await (const entry of Deno.readDir(root)) {
    if (entry.name.startsWith(".") || skip.includes(entry.name)) continue;
    if (entry.isDirectory || entry.name.endsWith(".ts")) entries.push(entry.name);
  }
  return entries.sort();
}

/**
 * The published modules (not tests, benchmarks, examples or tools) whose JSDoc holds a code block: passed to
 * `deno test --doc` by name, so their examples run and no test file runs twice.
 */
async function documentedModules(dirs: readonly string[]): Promise<string[]> {
  // Top-level folders that are not published; hidden folders and node_modules anywhere.
  const skip = /^(tests|bench|examples|tools)\/|(^|\/)(node_modules|\.[^/]+)\//;
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(`${root}${dir}`)) {
      const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (!skip.test(`${path}/`) && !config.workspace.some((m) => m === `./${path}`)) {
          await walk(path);
        }
      } else if (entry.isFile && path.endsWith(".ts") && !path.endsWith("_test.ts")) {
        if ((await Deno.readTextFile(`${root}${path}`)).includes("```ts")) found.push(path);
      }
    }
  };
  for (const dir of dirs) await walk(dir.replace(/^\.\//, "") || ".");
  return found.sort();
}

for (const step of steps) {
  const started = performance.now();
  const { code } = await new Deno.Command(Deno.execPath(), { args: step.args, cwd: step.cwd })
    .spawn().status;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (code !== 0) {
    console.error(`check failed: ${step.name} (exit ${code}, ${seconds}s)`);
    Deno.exit(1);
  }
  console.log(`ok: ${step.name} (${seconds}s)`);
}
