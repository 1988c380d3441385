/**
 * The containment cases of the fs seam, run side by side for the fs seam and for a command run through the
 * sandboxed Bash path (the `shell` row): on `sandbox-docker` (docker lane), where every case is contained by the
 * container's mount namespace, and on `sandbox-none`, which documents that it is not isolated (what the fs seam
 * denies, a host shell simply does; only a cwd outside the workspace and an empty workspace are refused).
 *
 * Cases: `..` traversal, a link to a file and to a directory out, a dangling link whose target does not exist yet
 * (written through), a link loop, a sibling sharing the workspace's prefix (`/ws` vs `/ws-evil`), writing through a
 * directory link out, `/etc/passwd`, a cwd outside the workspace, an empty workspace list, the output cap, and the
 * documented limit: a hard link placed in the workspace from outside is the same file on every path. The leaf
 * swap (a link swapped in after the check) has no shell equivalent: nothing is checked host-side before the
 * command; in the container the swapped-in link is the "link to a file out" case. Glob's dropped entries have none
 * either (a shell lists what is there).
 */
import assert from "node:assert/strict";
import { type Context, createContext, Loader, TerretError } from "@terret/hames";
import {
  dockerSandboxPlugin,
  type FileSystem,
  FsKey,
  fsPlugin,
  noneSandboxPlugin,
  ShellKey,
  shellPlugin,
  subprocessPlugin,
  workspacePlugin,
} from "@terret/exec";
import { dockerLane } from "../docker/lane.ts";
import { shellWord } from "../shell_words.ts";

const lane = await dockerLane();

/** root/ws (granted), root/outside (holds the canary), root/ws-evil (a prefix sibling), and links in ws. */
interface Tree extends AsyncDisposable {
  readonly root: string;
  readonly ws: string;
  readonly outside: string;
}

async function tree(): Promise<Tree> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-paths-" }));
  const ws = `${root}/ws`;
  const outside = `${root}/outside`;
  await Deno.mkdir(ws);
  await Deno.mkdir(outside);
  await Deno.mkdir(`${root}/ws-evil`);
  await Deno.writeTextFile(`${outside}/canary`, "secret");
  await Deno.writeTextFile(`${root}/ws-evil/canary`, "evil");
  await Deno.writeTextFile(`${ws}/big.txt`, "a".repeat(5000));
  await Deno.symlink(`${outside}/canary`, `${ws}/link-file`);
  await Deno.symlink(outside, `${ws}/link-dir`);
  await Deno.symlink(`${outside}/not-yet`, `${ws}/dangling`);
  await Deno.symlink(`${ws}/loop-b`, `${ws}/loop-a`);
  await Deno.symlink(`${ws}/loop-a`, `${ws}/loop-b`);
  await Deno.link(`${outside}/canary`, `${ws}/hard`);
  return {
    root,
    ws,
    outside,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

async function world(
  dirs: readonly string[],
  sandbox: { plugin: typeof noneSandboxPlugin | typeof dockerSandboxPlugin; config: unknown },
): Promise<Context> {
  const ctx = createContext({ mode: "test" });
  await new Loader(ctx).load([
    { id: "workspace", plugin: workspacePlugin, config: { dirs } },
    { id: "fs", plugin: fsPlugin, config: { max_read_bytes: 64 } },
    { id: "sandbox", plugin: sandbox.plugin, config: sandbox.config },
    // The programs' own messages are asserted word for word: in one locale, whatever the host's (the container
    // keeps its image's).
    {
      id: "subprocess",
      plugin: subprocessPlugin,
      config: { kill_grace_ms: 300, env: { LC_ALL: "C.UTF-8" } },
    },
    { id: "shell", plugin: shellPlugin, config: {} },
  ]);
  return ctx;
}

const NONE = { plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } };
const DOCKER = { plugin: dockerSandboxPlugin, config: { image: lane.image } };

/** How a case ended: `[code, message]` for a rejection, `[output, exit code]` for a command, the bytes for a read. */
type Outcome = readonly [string, string] | readonly [string, number | null] | string;

async function outcome(promise: Promise<unknown>): Promise<Outcome> {
  try {
    const value = await promise;
    if (typeof value === "string") return value;
    const ran = value as { output: string; exitCode: number | null };
    return [ran.output, ran.exitCode];
  } catch (error) {
    if (!(error instanceof TerretError)) throw error;
    return [error.code, error.message];
  }
}

/** The cases, in order: what the fs seam does and what the shell runs (each in a fresh session). */
function cases(t: Tree): readonly {
  name: string;
  fs: (fs: FileSystem) => Promise<unknown>;
  shell: string;
  cwd?: string;
  maxOutput?: number;
}[] {
  return [
    { name: "dotdot", fs: (fs) => fs.read("../outside/canary"), shell: "cat ../outside/canary" },
    { name: "symlink_file", fs: (fs) => fs.read("link-file"), shell: "cat link-file" },
    { name: "symlink_dir", fs: (fs) => fs.read("link-dir/canary"), shell: "cat link-dir/canary" },
    {
      name: "dangling_write",
      fs: (fs) => fs.write("dangling", "pwned"),
      shell: "printf pwned > dangling",
    },
    { name: "loop", fs: (fs) => fs.read("loop-a"), shell: "cat loop-a" },
    {
      name: "sibling_prefix",
      fs: (fs) => fs.read(`${t.root}/ws-evil/canary`),
      shell: `cat ${shellWord(`${t.root}/ws-evil/canary`)}`,
    },
    {
      name: "write_through_dir_link",
      fs: (fs) => fs.write("link-dir/new", "pwned"),
      shell: "printf pwned > link-dir/new",
    },
    { name: "passwd", fs: (fs) => fs.read("/etc/passwd"), shell: "cat /etc/passwd" },
    {
      name: "cd_outside",
      fs: (fs) => fs.list(t.outside),
      shell: `cd ${shellWord(t.outside)} && pwd`,
    },
    { name: "cwd_outside", fs: (fs) => fs.list(t.outside), shell: "pwd", cwd: t.outside },
    { name: "output_cap", fs: (fs) => fs.read("big.txt"), shell: "cat big.txt", maxOutput: 64 },
    { name: "hard_link", fs: (fs) => fs.read("hard"), shell: "cat hard" },
  ];
}

async function runCases(ctx: Context, t: Tree): Promise<Record<string, [Outcome, Outcome]>> {
  const fs = ctx.get(FsKey);
  const shell = ctx.get(ShellKey);
  const outcomes: Record<string, [Outcome, Outcome]> = {};
  for (const c of cases(t)) {
    const viaFs = await outcome(c.fs(fs));
    const viaShell = await outcome(
      shell.run(c.name, c.shell, {
        ...(c.cwd === undefined ? {} : { cwd: c.cwd }),
        ...(c.maxOutput === undefined ? {} : { maxOutput: c.maxOutput }),
      }),
    );
    await shell.close(c.name);
    outcomes[c.name] = [viaFs, viaShell];
  }
  return outcomes;
}

/** What the fs seam answers in every world: the same, whichever sandbox runs programs. */
function fsOutcomes(t: Tree): Record<string, Outcome> {
  const out = (real?: string) =>
    `outside the granted workspaces${real === undefined ? "" : ` (it resolves to "${real}")`}`;
  return {
    dotdot: ["Denied", `Cannot read "../outside/canary": ${out(`${t.outside}/canary`)}`],
    symlink_file: ["Denied", `Cannot read "link-file": ${out(`${t.outside}/canary`)}`],
    symlink_dir: ["Denied", `Cannot read "link-dir/canary": ${out(`${t.outside}/canary`)}`],
    dangling_write: ["Denied", `Cannot write "dangling": ${out(`${t.outside}/not-yet`)}`],
    loop: ["Denied", 'Cannot read "loop-a": more than 40 symbolic links (a loop?)'],
    sibling_prefix: ["Denied", `Cannot read "${t.root}/ws-evil/canary": ${out()}`],
    write_through_dir_link: [
      "Denied",
      `Cannot write "link-dir/new": ${out(`${t.outside}/new`)}`,
    ],
    passwd: ["Denied", `Cannot read "/etc/passwd": ${out()}`],
    cd_outside: ["Denied", `Cannot list "${t.outside}": ${out()}`],
    cwd_outside: ["Denied", `Cannot list "${t.outside}": ${out()}`],
    output_cap: [
      "TooLarge",
      'Cannot read "big.txt": 5000 bytes is over the 64-byte read limit (read a range with offset and length)',
    ],
    hard_link: "secret",
  };
}

const CAPPED = `${"a".repeat(32)}\n[… 4936 bytes truncated …]\n${"a".repeat(32)}`;

Deno.test("containment cases: the fs seam denies each; the shell on sandbox-none runs them on the host", async () => {
  await using t = await tree();
  await using ctx = await world([t.ws], NONE);
  const outcomes = await runCases(ctx, t);
  const fs = fsOutcomes(t);
  const passwd = await Deno.readTextFile("/etc/passwd");
  assert.deepStrictEqual(outcomes, {
    dotdot: [fs.dotdot, ["secret", 0]],
    symlink_file: [fs.symlink_file, ["secret", 0]],
    symlink_dir: [fs.symlink_dir, ["secret", 0]],
    dangling_write: [fs.dangling_write, ["", 0]],
    loop: [fs.loop, ["cat: loop-a: Too many levels of symbolic links\n", 1]],
    sibling_prefix: [fs.sibling_prefix, ["evil", 0]],
    write_through_dir_link: [fs.write_through_dir_link, ["", 0]],
    passwd: [fs.passwd, [passwd, 0]],
    cd_outside: [fs.cd_outside, [`${t.outside}\n`, 0]],
    cwd_outside: [fs.cwd_outside, [
      "Denied",
      `Cannot run in "${t.outside}": outside the granted workspaces`,
    ]],
    output_cap: [fs.output_cap, [CAPPED, 0]],
    hard_link: [fs.hard_link, ["secret", 0]],
  });
  // Not isolated: the host shell wrote outside, through the dangling link and the directory link.
  assert.deepStrictEqual(
    [await Deno.readTextFile(`${t.outside}/not-yet`), await Deno.readTextFile(`${t.outside}/new`)],
    ["pwned", "pwned"],
  );
});

Deno.test({
  name: "containment cases: the fs seam denies each; the shell on sandbox-docker contains each",
  ignore: lane.skip !== undefined,
  async fn() {
    await using t = await tree();
    await using ctx = await world([t.ws], DOCKER);
    const outcomes = await runCases(ctx, t);
    const fs = fsOutcomes(t);
    // cat quotes a name its message would leave ambiguous (a space, a quote, a shell character), as a shell word.
    const named = (path: string) => /[^\w./+,:@%^=-]/.test(path) ? shellWord(path) : path;
    const missing = (path: string) =>
      [`cat: ${named(path)}: No such file or directory\n`, 1] as const;
    // `line 2`: bash numbers the lines of its input, and a fresh session's first command is its second line.
    const noDir = (path: string) =>
      [`bash: line 2: ${path}: No such file or directory\n`, 1] as const;
    assert.deepStrictEqual(outcomes, {
      dotdot: [fs.dotdot, missing("../outside/canary")],
      symlink_file: [fs.symlink_file, missing("link-file")],
      symlink_dir: [fs.symlink_dir, missing("link-dir/canary")],
      dangling_write: [fs.dangling_write, noDir("dangling")],
      loop: [fs.loop, ["cat: loop-a: Too many levels of symbolic links\n", 1]],
      sibling_prefix: [fs.sibling_prefix, missing(`${t.root}/ws-evil/canary`)],
      write_through_dir_link: [fs.write_through_dir_link, noDir("link-dir/new")],
      // The container's own /etc/passwd (tests/docker/make_image.sh writes it), not the host's.
      passwd: [fs.passwd, [
        "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        0,
      ]],
      cd_outside: [fs.cd_outside, noDir(`cd: ${t.outside}`)],
      cwd_outside: [fs.cwd_outside, [
        "Denied",
        `Cannot run in "${t.outside}": outside the granted workspaces`,
      ]],
      output_cap: [fs.output_cap, [CAPPED, 0]],
      // The documented limit: a hard link is not a path; placed from outside, it is the same file everywhere.
      hard_link: [fs.hard_link, ["secret", 0]],
    });
    const outside = (await Array.fromAsync(Deno.readDir(t.outside))).map((entry) => entry.name);
    assert.deepStrictEqual(outside, ["canary"], "nothing was written outside");
  },
});

for (const [provider, sandbox] of [["none", NONE], ["docker", DOCKER]] as const) {
  Deno.test({
    name:
      `containment cases: an empty workspace list denies the fs seam and the shell (sandbox-${provider})`,
    ignore: provider === "docker" && lane.skip !== undefined,
    async fn() {
      await using t = await tree();
      await using ctx = await world([], sandbox);
      const shell = ctx.get(ShellKey);
      assert.deepStrictEqual(
        [
          await outcome(ctx.get(FsKey).read(`${t.ws}/big.txt`)),
          await outcome(shell.run("k", "true")),
          await outcome(shell.run("k", "true", { cwd: t.ws })),
        ],
        [
          ["Denied", `Cannot read "${t.ws}/big.txt": no workspace is granted`],
          ["Denied", 'Cannot start a shell for "k": no workspace directory is granted'],
          ["Denied", `Cannot run in "${t.ws}": no workspace is granted`],
        ],
      );
    },
  });
}
