// deno-lint-ignore-file no-console
/**
 * The project's checks, in order: formatting, lint, type check of every module and of every JSDoc example,
 * `deno publish --dry-run` for
 * every workspace member (slow types, licenses, versions), the layering rule, and catalog drift.
 * Exits non-zero on the first failure.
 *
 * Run: deno task check
 *
 * @module
 */

const root = new URL("../", import.meta.url).pathname;
const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as { workspace: string[] };
const members = [".", ...config.workspace];

const steps: { name: string; cwd: string; args: string[] }[] = [
  { name: "fmt", cwd: root, args: ["fmt", "--check"] },
  { name: "lint", cwd: root, args: ["lint"] },
  { name: "type check", cwd: root, args: ["check", "."] },
  { name: "doc examples type check", cwd: root, args: ["check", "--doc", "."] },
  ...members.map((member) => ({
    name: `publish dry run (${member})`,
    cwd: `${root}${member}`,
    args: ["publish", "--dry-run", "--allow-dirty", "--quiet"],
  })),
  { name: "layering", cwd: root, args: ["run", "-A", "tools/layers.ts"] },
  { name: "catalog drift", cwd: root, args: ["run", "-A", "tools/catalog.ts", "--check"] },
];

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
