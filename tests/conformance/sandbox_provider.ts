// deno-lint-ignore-file no-console
/**
 * The one conformance suite every sandbox provider's test file runs: the `Sandbox` contract (argv and cwd checks,
 * an idempotent `workspaceReady`, a program run in the real cwd with its exit code, stdin, environment and
 * streams, cancellation of the whole program tree) and the escape attempts (read `/etc/passwd`, read and write
 * outside the workspace, reach a TCP listener on 127.0.0.1, follow a workspace symlink out, `..` traversal, write
 * through a dangling link, a sibling sharing the workspace's prefix, a link loop, a cwd outside the workspace, an
 * empty workspace list).
 *
 * Each escape ends `refused` (wrap rejected it with `Denied`), `contained` (the program ran and failed to escape)
 * or `escaped`; the provider's test states the exact outcome it expects, and the suite asserts that `isolated` is
 * true only where nothing escaped. Wrapped argvs are spawned here with `Deno.Command` (detached, cleared
 * environment), as the subprocess seam does.
 *
 * This suite checks `wrap` itself; the escape battery (`escape_battery.ts`, re-exported here) runs the escapes
 * THROUGH the real tools and the shell of a mounted world, for every provider.
 *
 * @module
 */
import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import type { Sandbox } from "@terret/core";
import type { WrappedCommand } from "@terret/core/seams";

export {
  BATTERY,
  type BatteryOutcome,
  type BatterySubject,
  EXPECTED_ESCAPES,
  renderEscapeTable,
  runEscapeBattery,
  testEscapeBattery,
} from "./escape_battery.ts";

/** The escape attempts, in the order the suite reports them. */
export const ESCAPES = [
  "read_passwd",
  "read_outside",
  "write_outside",
  "network",
  "symlink_out",
  "dotdot",
  "dangling_write",
  "sibling_prefix",
  "symlink_loop",
  "cwd_outside",
  "empty_workspace",
] as const;

/** One escape attempt's name. */
export type EscapeName = typeof ESCAPES[number];
/** How an escape attempt ended. */
export type EscapeOutcome = "refused" | "contained" | "escaped";

/** A provider under test, with its cleanup. */
export interface ConformanceSubject {
  readonly sandbox: Sandbox;
  dispose(): Promise<void>;
}

/** Options for {@linkcode runSandboxConformance}. */
export interface SandboxConformanceOptions {
  /** The provider name, as `sandbox.name` reports it. */
  readonly name: string;
  /** Creates the provider over real directories (possibly none). */
  create(dirs: readonly string[]): Promise<ConformanceSubject> | ConformanceSubject;
  /** How the probe programs are written: shell scripts (`bash -c`) or Deno programs. */
  readonly language: "shell" | "deno";
  /** The exact outcome of every escape attempt. */
  readonly expected: Readonly<Record<EscapeName, EscapeOutcome>>;
  /**
   * How many processes the cancellation probe runs while alive, counted by {@linkcode countProcesses}: the shell
   * probe is `bash -c 'sleep & sleep & …; wait'` (plus any wrapper process the provider adds), the Deno probe one
   * process.
   */
  readonly runningProcesses: number;
  /** Counts processes whose command line holds `marker`, where the provider runs them (default: host `ps`). */
  countProcesses?(marker: string, subject: ConformanceSubject): Promise<number>;
  /** When set, the suite is skipped and says so loudly. */
  readonly skip?: string | undefined;
}

const DEADLINE_MS = 30_000;

/** Registers the conformance test for one provider. */
export function runSandboxConformance(options: SandboxConformanceOptions): void {
  if (options.skip !== undefined) {
    console.warn(
      `\n!!! SKIPPED: ${options.name} sandbox conformance: ${options.skip}\n`,
    );
  }
  Deno.test({
    name: `${options.name} sandbox conformance`,
    ignore: options.skip !== undefined,
    async fn(t) {
      await using world = await World.create();
      const subject = await options.create([world.ws]);
      try {
        assert.equal(subject.sandbox.name, options.name);
        await t.step("contract", () => contract(options, subject, world));
        await t.step(
          "cancellation stops the whole program tree",
          () => cancellation(options, subject, world),
        );
        await t.step("escape attempts", async () => {
          const outcomes = await escapes(options, subject, world);
          assert.deepStrictEqual(outcomes, options.expected);
          if (subject.sandbox.isolated) {
            assert.deepStrictEqual(
              ESCAPES.filter((name) => outcomes[name] === "escaped"),
              [],
              "isolated is true only where every escape fails",
            );
          } else {
            assert.notDeepStrictEqual(
              ESCAPES.filter((name) => outcomes[name] === "escaped"),
              [],
              "a provider that contains every escape should say it is isolated",
            );
          }
        });
      } finally {
        await subject.dispose();
      }
    },
  });
}

/** root/ws (granted), root/outside (a canary), root/ws-evil (a sibling sharing the prefix). */
class World {
  readonly secret = `canary-${crypto.randomUUID()}`;
  private constructor(readonly root: string) {}

  static async create(): Promise<World> {
    const world = new World(await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-sbx-" })));
    await Deno.mkdir(`${world.ws}/sub`, { recursive: true });
    await Deno.mkdir(world.outside);
    await Deno.mkdir(`${world.root}/ws-evil`);
    await Deno.writeTextFile(`${world.outside}/canary`, world.secret);
    await Deno.writeTextFile(`${world.root}/ws-evil/canary`, world.secret);
    return world;
  }

  get ws(): string {
    return `${this.root}/ws`;
  }

  get outside(): string {
    return `${this.root}/outside`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Deno.remove(this.root, { recursive: true });
  }
}

/** What a spawned wrapped program did. */
interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Starts a wrapped command as the subprocess seam does: its own process group, only the wrapped environment, stdin
 * and stdout piped.
 */
export function spawnWrapped(
  wrapped: WrappedCommand,
  stderr: "piped" | "null",
): Deno.ChildProcess {
  return new Deno.Command(wrapped.argv[0]!, {
    args: wrapped.argv.slice(1),
    cwd: wrapped.cwd,
    env: { ...wrapped.env },
    clearEnv: true,
    detached: true,
    stdin: "piped",
    stdout: "piped",
    stderr,
  }).spawn();
}

/** Spawns a wrapped command as the subprocess seam does, bounded by a deadline that fails the test. */
async function spawn(wrapped: WrappedCommand, stdin = ""): Promise<Ran> {
  const child = spawnWrapped(wrapped, "piped");
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
    void wrapped.signal?.("SIGKILL");
  }, DEADLINE_MS);
  try {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin)).catch(() => {});
    await writer.close().catch(() => {});
    const [stdout, stderr, status] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.status,
    ]);
    assert.equal(timedOut, false, `"${wrapped.argv.join(" ")}" ran past ${DEADLINE_MS} ms`);
    return { code: status.code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

function killGroup(pid: number): void {
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Builds the argv for a probe in the provider's language (a Deno probe is written into the workspace). */
async function probe(
  options: SandboxConformanceOptions,
  world: World,
  shell: string,
  deno: string,
): Promise<string[]> {
  if (options.language === "shell") return ["bash", "-c", shell];
  const file = `${world.ws}/probe-${crypto.randomUUID()}.ts`;
  await Deno.writeTextFile(file, deno);
  return [file];
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TerretError, `expected TerretError ${code}, got ${error}`);
    assert.equal(error.code, code, error.message);
    return error.message;
  }
  assert.fail(`expected a ${code} rejection`);
}

async function contract(
  options: SandboxConformanceOptions,
  subject: ConformanceSubject,
  world: World,
): Promise<void> {
  const { sandbox } = subject;
  await Promise.all([sandbox.workspaceReady(), sandbox.workspaceReady()]);
  await sandbox.workspaceReady();
  await assert.rejects(sandbox.wrap([], { cwd: world.ws }), TypeError);
  await assert.rejects(sandbox.wrap(["true"], { cwd: "relative" }), TypeError);
  await Deno.symlink(world.outside, `${world.ws}/cwd-out`);
  try {
    for (const cwd of [world.outside, `${world.root}/ws-evil`, `${world.ws}/cwd-out`, "/"]) {
      await rejectsWith(sandbox.wrap(["true"], { cwd }), "Denied");
    }
  } finally {
    await Deno.remove(`${world.ws}/cwd-out`);
  }
  await rejectsWith(sandbox.wrap(["true"], { cwd: `${world.ws}/missing` }), "NotFound");

  // A cwd reached through a link inside the workspace runs in its real directory.
  await Deno.symlink(`${world.ws}/sub`, `${world.ws}/sub-link`);
  try {
    const argv = await probe(
      options,
      world,
      'pwd; read -r line; printf "in:%s\\n" "$line"; printf "env:%s\\n" "$TERRET_PROBE"; echo err >&2; exit 7',
      `console.log(Deno.cwd());
const line = (await new Response(Deno.stdin.readable).text()).split("\\n")[0];
console.log("in:" + line);
console.log("env:" + Deno.env.get("TERRET_PROBE"));
console.error("err");
Deno.exit(7);`,
    );
    const wrapped = await sandbox.wrap(argv, {
      cwd: `${world.ws}/sub-link`,
      env: { TERRET_PROBE: "value with spaces" },
    });
    assert.equal(wrapped.cwd, `${world.ws}/sub`);
    assert.deepStrictEqual(await spawn(wrapped, "hello\nworld\n"), {
      code: 7,
      stdout: `${world.ws}/sub\nin:hello\nenv:value with spaces\n`,
      stderr: "err\n",
    });
  } finally {
    await Deno.remove(`${world.ws}/sub-link`);
  }
}

async function cancellation(
  options: SandboxConformanceOptions,
  subject: ConformanceSubject,
  world: World,
): Promise<void> {
  const marker = String(900_000 + Math.floor(Math.random() * 99_999));
  const argv = await probe(
    options,
    world,
    `sleep ${marker}.5 & sleep ${marker}.25 & echo started; wait`,
    `console.log("started"); setInterval(() => {}, 1000); // ${marker}`,
  );
  const wrapped = await subject.sandbox.wrap(
    options.language === "deno" ? [...argv, `marker-${marker}`] : argv,
    { cwd: world.ws },
  );
  const count = (): Promise<number> =>
    (options.countProcesses ?? countHostProcesses)(marker, subject);
  const child = spawnWrapped(wrapped, "null");
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("started")) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  assert.equal(seen, "started\n");
  assert.equal(await count(), options.runningProcesses, "the program runs before it is cancelled");
  killGroup(child.pid);
  await wrapped.signal?.("SIGKILL");
  await child.stdin.close().catch(() => {});
  await reader.cancel();
  await child.status;
  const deadline = Date.now() + 10_000;
  let left = await count();
  while (left > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = await count();
  }
  assert.equal(left, 0, "no process of the cancelled program is left");
}

async function countHostProcesses(marker: string): Promise<number> {
  const out = await new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => line.includes(marker))
    .length;
}

async function escapes(
  options: SandboxConformanceOptions,
  subject: ConformanceSubject,
  world: World,
): Promise<Record<EscapeName, EscapeOutcome>> {
  const { sandbox } = subject;
  const passwd = await Deno.readTextFile("/etc/passwd");
  const read = (path: string) =>
    probe(
      options,
      world,
      `cat '${path}'`,
      `console.log(await Deno.readTextFile(${JSON.stringify(path)}));`,
    );
  const write = (path: string) =>
    probe(
      options,
      world,
      `printf pwned > '${path}'`,
      `await Deno.writeTextFile(${JSON.stringify(path)}, "pwned");`,
    );
  const exists = async (path: string) =>
    (await Deno.lstat(path).catch(() => undefined)) !== undefined;

  /** Wraps and runs `argv`; `refused` on `Denied` from wrap, else what `escaped` says about the run. */
  const attempt = async (
    argv: string[],
    escaped: (ran: Ran) => boolean | Promise<boolean>,
    cwd = world.ws,
  ): Promise<EscapeOutcome> => {
    let wrapped: WrappedCommand;
    try {
      wrapped = await sandbox.wrap(argv, { cwd });
    } catch (error) {
      if (error instanceof TerretError && error.code === "Denied") return "refused";
      throw error;
    }
    return (await escaped(await spawn(wrapped))) ? "escaped" : "contained";
  };
  const leaks = (ran: Ran) => ran.stdout.includes(world.secret);

  const outcomes = {} as Record<EscapeName, EscapeOutcome>;
  outcomes.read_passwd = await attempt(
    await read("/etc/passwd"),
    (ran) => ran.stdout.trimEnd() === passwd.trimEnd(),
  );
  outcomes.read_outside = await attempt(await read(`${world.outside}/canary`), leaks);
  outcomes.write_outside = await attempt(
    await write(`${world.outside}/written`),
    () => exists(`${world.outside}/written`),
  );
  outcomes.network = await network(options, world, attempt);
  await Deno.symlink(world.outside, `${world.ws}/link-out`);
  try {
    outcomes.symlink_out = await attempt(await read(`${world.ws}/link-out/canary`), leaks);
  } finally {
    await Deno.remove(`${world.ws}/link-out`);
  }
  outcomes.dotdot = await attempt(await read(`${world.ws}/../outside/canary`), leaks);
  await Deno.symlink(`${world.outside}/via-link`, `${world.ws}/dangling`);
  try {
    outcomes.dangling_write = await attempt(
      await write(`${world.ws}/dangling`),
      () => exists(`${world.outside}/via-link`),
    );
  } finally {
    await Deno.remove(`${world.ws}/dangling`);
  }
  outcomes.sibling_prefix = await attempt(await read(`${world.root}/ws-evil/canary`), leaks);
  await Deno.symlink(`${world.ws}/loop-b`, `${world.ws}/loop-a`);
  await Deno.symlink(`${world.ws}/loop-a`, `${world.ws}/loop-b`);
  try {
    outcomes.symlink_loop = await attempt(
      await read(`${world.ws}/loop-a`),
      (ran) => ran.code === 0,
    );
  } finally {
    await Deno.remove(`${world.ws}/loop-a`);
    await Deno.remove(`${world.ws}/loop-b`);
  }
  outcomes.cwd_outside = await attempt(
    await probe(options, world, "pwd", "console.log(Deno.cwd());"),
    (ran) => ran.stdout.trim() === world.outside,
    world.outside,
  );
  outcomes.empty_workspace = await emptyWorkspace(options, world);
  return Object.fromEntries(ESCAPES.map((name) => [name, outcomes[name]])) as Record<
    EscapeName,
    EscapeOutcome
  >;
}

async function network(
  options: SandboxConformanceOptions,
  world: World,
  attempt: (argv: string[], escaped: (ran: Ran) => Promise<boolean>) => Promise<EscapeOutcome>,
): Promise<EscapeOutcome> {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepted = listener.accept().then((conn) => {
    conn.close();
    return true;
  }, () => false);
  const outcome = await attempt(
    await probe(
      options,
      world,
      `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`,
      `const conn = await Deno.connect({ hostname: "127.0.0.1", port: ${port} });
console.log("CONNECTED");
conn.close();`,
    ),
    // The program says it connected only after a connect that the listener then accepts.
    async (ran) => ran.stdout.includes("CONNECTED") && await accepted,
  );
  listener.close();
  await accepted;
  return outcome;
}

async function emptyWorkspace(
  options: SandboxConformanceOptions,
  world: World,
): Promise<EscapeOutcome> {
  const empty = await options.create([]);
  try {
    await empty.sandbox.wrap(await probe(options, world, "true", "Deno.exit(0);"), {
      cwd: world.ws,
    });
    return "escaped";
  } catch (error) {
    if (error instanceof TerretError && error.code === "Denied") return "refused";
    throw error;
  } finally {
    await empty.dispose();
  }
}
