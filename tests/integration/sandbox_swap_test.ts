/**
 * One row moves the execution world: the same consumer code (an fs write, then a program run through
 * `sandbox.wrap`) booted with `sandbox: none` runs on the host, and with only the `sandbox` row replaced by the
 * docker provider runs in the container (another mount namespace), seeing the very bytes the fs seam wrote. (The persistent shell and the
 * PTY join this test once the subprocess seam lands.)
 */
import assert from "node:assert/strict";
import { type Context, createContext, Loader, type Row } from "@terret/hames";
import { SandboxKey } from "@terret/core";
import {
  dockerSandboxPlugin,
  FsKey,
  fsPlugin,
  noneSandboxPlugin,
  workspacePlugin,
} from "@terret/exec";
import { dockerLane } from "../docker/lane.ts";

const lane = await dockerLane();

/** The consumer: knows only the `fs` and `sandbox` services. */
async function consumer(ctx: Context, ws: string): Promise<string> {
  await ctx.get(FsKey).write("note.txt", "bytes from the fs seam\n");
  const sandbox = ctx.get(SandboxKey);
  const wrapped = await sandbox.wrap([
    "bash",
    "-c",
    // The mount namespace tells host from container (this machine's image has a /.dockerenv of its own).
    'cat note.txt; readlink /proc/self/ns/mnt; printf "bytes from the program" > reply.txt',
  ], { cwd: ws });
  const out = await new Deno.Command(wrapped.argv[0]!, {
    args: wrapped.argv.slice(1),
    cwd: wrapped.cwd,
    env: { ...wrapped.env },
    clearEnv: true,
    detached: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  assert.equal(new TextDecoder().decode(out.stderr), "");
  return new TextDecoder().decode(out.stdout);
}

Deno.test({
  name: "replacing the sandbox row moves a program into the container, sharing the fs seam's bytes",
  ignore: lane.skip !== undefined,
  async fn() {
    const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-swap-" }));
    try {
      const base: Row[] = [
        { id: "workspace", plugin: workspacePlugin, config: { dirs: [ws] } },
        { id: "fs", plugin: fsPlugin, config: {} },
        { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
      ];
      const patched = base.map((row) =>
        row.id === "sandbox"
          ? { id: "sandbox", plugin: dockerSandboxPlugin, config: { image: lane.image } }
          : row
      );
      const outputs: string[] = [];
      const replies: string[] = [];
      for (const rows of [base, patched]) {
        await using ctx = createContext({ mode: "test" });
        await new Loader(ctx).load(rows);
        outputs.push(await consumer(ctx, ws));
        replies.push(await ctx.get(FsKey).read("reply.txt"));
      }
      const host = await Deno.readLink("/proc/self/ns/mnt");
      assert.equal(outputs[0], `bytes from the fs seam\n${host}\n`);
      assert.match(outputs[1]!, /^bytes from the fs seam\nmnt:\[\d+\]\n$/);
      assert.notEqual(outputs[1], outputs[0], "the program ran in another mount namespace");
      assert.deepStrictEqual(replies, ["bytes from the program", "bytes from the program"]);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
});
