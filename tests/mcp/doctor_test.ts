/**
 * `trt mcp doctor` as a real process against the real server-filesystem: the server starts under its row's own
 * deno sandbox, its tools are listed, and each permission Deno denied it is reported with the key that grants it.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { writeTree } from "../fixtures/composition/tree.ts";
import { FILESYSTEM, prefetchServers } from "./_world.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));

const FS_TOOLS = [
  "create_directory",
  "directory_tree",
  "edit_file",
  "get_file_info",
  "list_allowed_directories",
  "list_directory",
  "list_directory_with_sizes",
  "move_file",
  "read_file",
  "read_media_file",
  "read_multiple_files",
  "read_text_file",
  "search_files",
  "write_file",
];

/** A home, a workspace and a read-only directory beside it, and a patch mounting server-filesystem over both. */
async function profile(allowEnv: readonly string[]) {
  const tree = await writeTree({ "work/.keep": "", "shared/notes.txt": "shared\n" });
  const work = await Deno.realPath(tree.path("work"));
  const shared = await Deno.realPath(tree.path("shared"));
  await Deno.remove(`${work}/.keep`);
  await Deno.writeTextFile(
    tree.path("patch.yml"),
    [
      "rows:",
      "  - id: workspace",
      `    config: { dirs: ["${work}"] }`,
      "  - id: sandbox", // the row's own sandbox is what confines the server
      "    plugin: sandbox-none",
      "    config: { acknowledge_unsandboxed: true }",
      "  - id: mcp.fs",
      "    plugin: terret-mcp",
      "    config:",
      "      name: fs",
      "      transport: stdio",
      `      command: "${FILESYSTEM}"`,
      `      args: ["${work}", "${shared}"]`,
      "      env: { NO_COLOR: '1' }",
      "      sandbox: deno",
      `      allow: { read: ["${shared}"], env: ${JSON.stringify(allowEnv)} }`,
      "",
    ].join("\n"),
  );
  return { tree, work, shared };
}

async function doctor(
  tree: { dir: string; path(relative: string): string },
  ...extra: string[]
): Promise<[number, string, string]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      MAIN,
      "mcp",
      "doctor",
      ...extra,
      "--home",
      tree.path("home"),
      "--patch",
      tree.path("patch.yml"),
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return [output.code, decoder.decode(output.stdout), decoder.decode(output.stderr)];
}

Deno.test("trt mcp doctor reports the variable a server was denied at start, and exits 1", async () => {
  await prefetchServers();
  const { tree, shared } = await profile([]);
  await using _ = tree;
  const [code, out, err] = await doctor(tree, "fs");
  assert.equal(err, "");
  const lines = out.trimEnd().split("\n");
  assert.deepStrictEqual(
    lines[0],
    `mcp.fs: runs under its own deno sandbox: the workspace, read ${shared}, write none, net none, env NO_COLOR, sys none`,
  );
  // The tail of its stderr (a stack trace through Deno's cache) follows.
  assert.match(
    lines[1]!,
    /^mcp\.fs: failed to start: Cannot connect to MCP server "fs": exited with code 1 \(stderr: at /,
  );
  assert.deepStrictEqual(lines.slice(2), [
    'mcp.fs: denied env "__MINIMATCH_TESTING_PLATFORM__" (grant with allow.env)',
  ]);
  assert.equal(code, 1);
});

Deno.test("trt mcp doctor lists a confined server's tools and reports a call denied outside its grant", async () => {
  await prefetchServers();
  const { tree, work, shared } = await profile(["__MINIMATCH_TESTING_PLATFORM__"]);
  await using _ = tree;
  const header =
    `mcp.fs: runs under its own deno sandbox: the workspace, read ${shared}, write none, ` +
    "net none, env NO_COLOR,__MINIMATCH_TESTING_PLATFORM__, sys none";
  const started = `mcp.fs: started; ${FS_TOOLS.length} tools: ${FS_TOOLS.join(", ")}`;

  const read = await doctor(
    tree,
    "fs",
    "--call",
    "read_text_file",
    "--args",
    JSON.stringify({ path: `${shared}/notes.txt` }),
  );
  assert.deepStrictEqual(read, [
    0,
    [header, started, "mcp.fs: call read_text_file: ok: shared", "mcp.fs: denied nothing", ""].join(
      "\n",
    ),
    "",
  ]);

  const write = await doctor(
    tree,
    "fs",
    "--call",
    "write_file",
    "--args",
    JSON.stringify({ path: `${shared}/planted.txt`, content: "x" }),
  );
  assert.deepStrictEqual(write, [
    1,
    [
      header,
      started,
      `mcp.fs: call write_file: error: Requires write access to "${shared}/planted.txt", run again with the --allow-write flag`,
      `mcp.fs: denied write "${shared}/planted.txt" (grant with allow.write)`,
      "",
    ].join("\n"),
    "",
  ]);
  await assert.rejects(Deno.stat(`${shared}/planted.txt`), Deno.errors.NotFound);
  assert.deepStrictEqual([...Deno.readDirSync(work)], []);

  assert.deepStrictEqual(await doctor(tree, "nope"), [
    2,
    "",
    'trt mcp: Cannot check MCP server "nope": profile "headless" has no enabled row "mcp.nope" (MCP rows: mcp.fs)\n',
  ]);
  assert.deepStrictEqual(await doctor(tree, "fs", "--args", "{}"), [
    2,
    "",
    "trt mcp: Cannot use --args without --call (usage: trt mcp doctor SERVER [--call TOOL [--args JSON]])\n",
  ]);
});
