// deno-lint-ignore-file no-console
/**
 * The escape battery every sandbox provider runs, THROUGH the real tools and seams: a mounted execution world (the
 * `workspace`, `fs`, `sandbox`, `subprocess`, `shell` and `terminals` rows, the tool registry and the standard
 * tools) and, per attempt, a `Bash` tool call (the persistent shell on a PTY), a `Read`/`Write` tool call (the fs
 * seam), a `terminal_open` (a PTY terminal) or, for a provider that runs Deno programs only, the same attempt as a
 * Deno program through the `subprocess` seam.
 *
 * The harness side is real: a TCP listener standing for the socket port, an HTTP server standing for the model, a
 * UDP listener, a DNS responder, a unix socket and a SQLite session database in a Terret home beside the workspace,
 * an SSH key in a home directory, host variables holding secrets. Each attempt ends `refused` (the tool or seam
 * said `Denied` before anything ran), `contained` (it ran and failed to escape) or `escaped`. The provider's test
 * states the exact outcome it expects, and a provider claiming `isolated: true` must not let any escape.
 *
 * `renderEscapeTable` renders the outcomes of every provider for docs/security.md.
 *
 * @module
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { DatabaseSync } from "node:sqlite";
import { type Context, createContext, Loader, type PluginLike } from "@terret/hames";
import {
  ApprovalsService,
  memoryStorePlugin,
  SandboxKey,
  SessionsKey,
  sessionsPlugin,
  SubprocessKey,
  ToolAllowList,
  ToolRegistry,
  ToolsKey,
} from "@terret/core";
import type { ToolResultPayload } from "@terret/core/tools";
import {
  fsPlugin,
  shellPlugin,
  stdToolsPlugin,
  subprocessPlugin,
  terminalsPlugin,
  workspacePlugin,
} from "@terret/exec";

/** Every attempt, in the order the battery runs and the table lists them, with its table label. */
export const BATTERY: readonly (readonly [string, string])[] = [
  ["read_shadow", "read `/etc/shadow`"],
  ["read_passwd", "read the host's `/etc/passwd`"],
  ["read_ssh_key", "read `~/.ssh/id_ed25519`"],
  ["read_ws_token", "read the Terret home's `ws/token`"],
  ["read_session_db", "read the Terret home's session database"],
  ["read_proc_environ", "read `/proc/<harness pid>/environ`"],
  ["read_proc_root", "read through `/proc/<harness pid>/root`"],
  ["fs_read_outside", "`Read` tool outside the workspace"],
  ["fs_write_outside", "`Write` tool outside the workspace"],
  ["write_outside", "write outside the workspace"],
  ["write_dotdot", "write through `..`"],
  ["write_symlink", "write through a planted link out"],
  ["write_dangling", "write through a dangling link out"],
  ["write_hardlink", "hard-link a file from outside and write it"],
  ["write_tmp", "write `/tmp` as the host sees it"],
  ["tcp_socket_port", "TCP to the harness's socket port"],
  ["http_model", "HTTP to the harness's (fake) model"],
  ["udp", "UDP to a harness listener"],
  ["dns", "DNS query to a resolver on 127.0.0.1"],
  ["unix_socket_home", "unix socket in the Terret home"],
  ["docker_socket", "the Docker socket"],
  ["ptrace_harness", "open the harness's memory (ptrace access)"],
  ["kill_harness", "signal the harness"],
  ["fork_bomb", "fork bomb (200 processes)"],
  ["env_secrets", "host secret variables in the environment"],
  ["setsid_cancel", "`setsid` child outlives a cancel"],
  ["setsid_dispose", "`setsid` child outlives dispose"],
];

/** An attempt's name. */
export type BatteryName = string;
/** How an attempt ended. */
export type BatteryOutcome = "refused" | "contained" | "escaped";

/** A provider under the battery. */
export interface BatterySubject {
  /** The provider (`sandbox.name`). */
  readonly name: string;
  /** The `sandbox` row. */
  readonly sandbox: { readonly plugin: PluginLike; readonly config: unknown };
  /** Shell providers run attempts through `Bash`; `deno` runs them as Deno programs through `subprocess`. */
  readonly language: "shell" | "deno";
  /** The exact outcome of every attempt. */
  readonly expected: Readonly<Record<BatteryName, BatteryOutcome>>;
  /**
   * For a provider that runs programs as the host's user (`none`): the attempts the host's user cannot do on this
   * machine either, which are then expected `contained` (by the host, not the provider). Default: none.
   */
  readonly hostLimits?: () => Promise<Partial<Record<BatteryName, BatteryOutcome>>>;
}

const SECRET_ENV = ["TERRET_TOKEN", "OPENROUTER_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"];
const DEADLINE_MS = 15_000;

/** The harness side of the battery: files, listeners and secrets outside the workspace. */
class Harness {
  readonly canary = `canary-${crypto.randomUUID()}`;
  /** Names this battery's processes (`exec -a`) and DNS question, unique to the run. */
  readonly marker = `battery${crypto.randomUUID().replaceAll("-", "")}`;
  readonly tcp: Deno.TcpListener;
  readonly unix: Deno.UnixListener;
  readonly http: Deno.HttpServer;
  readonly udp: dgram.Socket;
  readonly dns: dgram.Socket;
  /** What each accepted connection sent first, in accept order (`""` for none). */
  readonly tcpSeen: string[] = [];
  readonly unixSeen: string[] = [];
  httpHits = 0;
  readonly udpSeen: string[] = [];
  readonly dnsSeen: string[] = [];
  readonly #savedEnv = new Map<string, string | undefined>();
  readonly #conns = new Set<Deno.Conn>();
  readonly #reads: Promise<void>[] = [];

  private constructor(readonly root: string) {
    this.tcp = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    void this.#accept(this.tcp, this.tcpSeen);
    this.unix = Deno.listen({ transport: "unix", path: `${this.home}/.terret/serve.sock` });
    void this.#accept(this.unix, this.unixSeen);
    this.http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
      this.httpHits++;
      return new Response("model");
    });
    this.udp = dgram.createSocket("udp4");
    this.udp.on("message", (message) => this.udpSeen.push(message.toString()));
    this.dns = dgram.createSocket("udp4");
    this.dns.on("message", (message) => {
      this.dnsSeen.push(qname(message), new TextDecoder().decode(message));
    });
  }

  static async create(): Promise<Harness> {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-battery-" }));
    for (const dir of ["ws", "outside", "home/.ssh", "home/.terret/ws", "home/.terret/sessions"]) {
      await Deno.mkdir(`${root}/${dir}`, { recursive: true });
    }
    const harness = new Harness(root);
    await Promise.all([bind(harness.udp), bind(harness.dns)]);
    await Deno.writeTextFile(`${harness.outside}/canary`, harness.canary);
    await Deno.writeTextFile(`${harness.outside}/target`, "original");
    await Deno.writeTextFile(`${harness.home}/.ssh/id_ed25519`, `KEY ${harness.canary}`);
    await Deno.writeTextFile(`${harness.home}/.terret/ws/token`, `token-${harness.canary}`);
    const db = new DatabaseSync(`${harness.home}/.terret/sessions/terret.db`);
    db.exec("CREATE TABLE events (payload TEXT)");
    db.prepare("INSERT INTO events VALUES (?)").run(`the user said ${harness.canary}`);
    db.close();
    for (const name of SECRET_ENV) {
      harness.#savedEnv.set(name, Deno.env.get(name));
      Deno.env.set(name, `${name}-${harness.canary}`);
    }
    return harness;
  }

  get ws(): string {
    return `${this.root}/ws`;
  }
  get outside(): string {
    return `${this.root}/outside`;
  }
  get home(): string {
    return `${this.root}/home`;
  }
  get tcpPort(): number {
    return this.tcp.addr.port;
  }
  get httpPort(): number {
    return (this.http.addr as Deno.NetAddr).port;
  }
  get udpPort(): number {
    return this.udp.address().port;
  }
  get dnsPort(): number {
    return this.dns.address().port;
  }

  /**
   * Accepts in order, recording each connection at once (`""`) and then what it sent before it closed (the
   * program's sends nothing, and may never close).
   */
  async #accept(listener: Deno.Listener, seen: string[]): Promise<void> {
    try {
      for await (const conn of listener) {
        const index = seen.push("") - 1;
        this.#conns.add(conn);
        this.#reads.push(
          new Response(conn.readable).text().then(
            (text) => void (seen[index] = text),
            () => {},
          ).finally(() => this.#conns.delete(conn)),
        );
      }
    } catch {
      // closed
    }
  }

  /**
   * Connects from the host and waits until that connection is accepted: the listener accepts in order, so a
   * connection the program made is in `seen` by then. True when one was.
   */
  async connectedBefore(
    address: Deno.ConnectOptions | Deno.UnixConnectOptions,
    seen: string[],
  ): Promise<boolean> {
    const fence = `fence-${crypto.randomUUID()}`;
    const conn = await Deno.connect(address as Deno.ConnectOptions);
    await conn.write(new TextEncoder().encode(fence));
    conn.close();
    await until(() => seen.includes(fence), "the fence connection");
    return seen.some((text) => text !== fence);
  }

  /** Waits until a datagram sent now from the host arrives: any the program sent before it arrived first. */
  async fence(socket: dgram.Socket, seen: string[]): Promise<void> {
    const fence = `fence-${crypto.randomUUID()}`;
    const sender = dgram.createSocket("udp4");
    try {
      await new Promise<void>((resolve, reject) =>
        sender.send(
          fence,
          socket.address().port,
          "127.0.0.1",
          (error) => error ? reject(error) : resolve(),
        )
      );
      await until(() => seen.some((line) => line.includes(fence)), "the fence datagram");
    } finally {
      await new Promise<void>((resolve) => sender.close(() => resolve()));
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const [name, value] of this.#savedEnv) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
    this.tcp.close();
    this.unix.close();
    for (const conn of this.#conns) {
      try {
        conn.close();
      } catch {
        // closed by its reader
      }
    }
    await Promise.all(this.#reads);
    await this.http.shutdown();
    await Promise.all(
      [this.udp, this.dns].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
    await Deno.remove(this.root, { recursive: true });
  }
}

function bind(socket: dgram.Socket): Promise<void> {
  return new Promise((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
}

/** The first question's name of a DNS query (garbage when the datagram is not one). */
function qname(message: Uint8Array): string {
  const labels: string[] = [];
  let i = 12;
  while (i < message.length && message[i]! > 0 && labels.length < 20) {
    labels.push(new TextDecoder().decode(message.subarray(i + 1, i + 1 + message[i]!)));
    i += 1 + message[i]!;
  }
  return labels.join(".");
}

/** A DNS query for `name` (type A), as a bash `printf` format. */
function dnsQuery(name: string): string {
  const labels = name.split(".").map((label) =>
    `\\x${label.length.toString(16).padStart(2, "0")}${label}`
  ).join("");
  return `\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00${labels}\\x00\\x00\\x01\\x00\\x01`;
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for `condition`; false when it is still unmet at the deadline (an escape that lasts). */
async function settles(condition: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** A `setsid` sleeper in the background and one in the foreground, each named `<marker>-…` by `exec -a`. */
function twoSleeps(marker: string): string {
  return `setsid bash -c 'exec -a ${marker}-setsid sleep 600' & bash -c 'exec -a ${marker}-fg sleep 600'`;
}

/** Whether both sleepers of {@linkcode twoSleeps} run under their own names (exec'd, not still forking). */
async function bothSleeping(marker: string): Promise<boolean> {
  const found = await argsWith(marker);
  return found.includes(`${marker}-setsid 600`) && found.includes(`${marker}-fg 600`);
}

/** Host pids whose command line holds `marker` (a container's processes are host processes too). */
async function pidsWith(marker: string): Promise<number[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(marker) && !line.includes("ps -eo"))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Command lines (without the pid) of host processes holding `marker`. */
async function argsWith(marker: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "args="], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(marker) && !line.includes("ps -eo"))
    .map((line) => line.trim());
}

function textOf(result: ToolResultPayload): string {
  return typeof result.content === "string"
    ? result.content
    : result.content.map((part) => part.type === "text" ? part.text : "").join("\n");
}

/** One attempt: a bash command line, the same as a Deno program, and how an escape shows. */
interface Attempt {
  /** Links planted in the workspace for this attempt only (`[link, target]`), removed after it. */
  readonly plant?: readonly (readonly [string, string])[];
  readonly shell: string;
  readonly deno: string;
  escaped(output: string): boolean | Promise<boolean>;
}

function attempts(h: Harness, pid: number): Record<string, Attempt> {
  const read = (path: string, shell = `cat '${path}'`): Omit<Attempt, "escaped"> => ({
    shell,
    deno: `console.log(await Deno.readTextFile(${JSON.stringify(path)}));`,
  });
  const write = (path: string): Omit<Attempt, "escaped"> => ({
    shell: `printf pwned > '${path}'`,
    deno: `await Deno.writeTextFile(${JSON.stringify(path)}, "pwned");`,
  });
  const leaks = (output: string) => output.includes(h.canary);
  const exists = (path: string) => () => Deno.lstat(path).then(() => true, () => false);
  const hostFile = (path: string) => Deno.readTextFile(path).catch(() => "");
  const tmpName = `/tmp/terret-battery-${h.canary}`;
  const dockerSocket = "/var/run/docker.sock";
  const unixConnect = (path: string) =>
    `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); print('CONNECTED')"`;
  return {
    read_shadow: {
      ...read("/etc/shadow"),
      escaped: async (out) => {
        const shadow = await hostFile("/etc/shadow");
        return shadow !== "" && out.includes(shadow.split("\n")[0]!);
      },
    },
    read_passwd: {
      ...read("/etc/passwd"),
      escaped: async (out) => out.trimEnd() === (await hostFile("/etc/passwd")).trimEnd(),
    },
    read_ssh_key: { ...read(`${h.home}/.ssh/id_ed25519`), escaped: leaks },
    read_ws_token: { ...read(`${h.home}/.terret/ws/token`), escaped: leaks },
    read_session_db: {
      ...read(
        `${h.home}/.terret/sessions/terret.db`,
        `grep -ao '${h.canary}' '${h.home}/.terret/sessions/terret.db'`,
      ),
      escaped: leaks,
    },
    read_proc_environ: {
      ...read(`/proc/${pid}/environ`, `tr '\\0' '\\n' < /proc/${pid}/environ`),
      escaped: (out) => out.includes("PATH="),
    },
    read_proc_root: { ...read(`/proc/${pid}/root${h.outside}/canary`), escaped: leaks },
    write_outside: { ...write(`${h.outside}/written`), escaped: exists(`${h.outside}/written`) },
    write_dotdot: { ...write(`${h.ws}/../outside/dotdot`), escaped: exists(`${h.outside}/dotdot`) },
    write_symlink: {
      plant: [[`${h.ws}/link-out`, h.outside]],
      ...write(`${h.ws}/link-out/via-link`),
      escaped: exists(`${h.outside}/via-link`),
    },
    write_dangling: {
      plant: [[`${h.ws}/dangling`, `${h.outside}/via-dangling`]],
      ...write(`${h.ws}/dangling`),
      escaped: exists(`${h.outside}/via-dangling`),
    },
    write_hardlink: {
      shell: `ln '${h.outside}/target' '${h.ws}/hard' && printf pwned >> '${h.ws}/hard'`,
      deno: `await Deno.link(${JSON.stringify(`${h.outside}/target`)}, ${
        JSON.stringify(`${h.ws}/hard`)
      });\nawait Deno.writeTextFile(${JSON.stringify(`${h.ws}/hard`)}, "pwned", { append: true });`,
      escaped: async () => (await hostFile(`${h.outside}/target`)) !== "original",
    },
    write_tmp: { ...write(tmpName), escaped: exists(tmpName) },
    tcp_socket_port: {
      shell: `(exec 3<>/dev/tcp/127.0.0.1/${h.tcpPort} && echo CONNECTED)`,
      deno: `(await Deno.connect({ hostname: "127.0.0.1", port: ${h.tcpPort} })).close();`,
      escaped: () => h.connectedBefore({ hostname: "127.0.0.1", port: h.tcpPort }, h.tcpSeen),
    },
    http_model: {
      shell:
        `(exec 3<>/dev/tcp/127.0.0.1/${h.httpPort} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3)`,
      deno: `console.log(await (await fetch("http://127.0.0.1:${h.httpPort}/")).text());`,
      escaped: () => h.httpHits > 0,
    },
    udp: {
      shell: `printf 'udp-${h.canary}' > /dev/udp/127.0.0.1/${h.udpPort}`,
      deno: `import dgram from "node:dgram";
const s = dgram.createSocket("udp4");
await new Promise((resolve, reject) => s.send("udp-${h.canary}", ${h.udpPort}, "127.0.0.1", (e) => e ? reject(e) : resolve(0)));
s.close();`,
      escaped: async () => {
        await h.fence(h.udp, h.udpSeen);
        return h.udpSeen.includes(`udp-${h.canary}`);
      },
    },
    dns: {
      shell: `printf '${
        dnsQuery(`q${h.marker}.battery.invalid`)
      }' > /dev/udp/127.0.0.1/${h.dnsPort}`,
      deno:
        `await Deno.resolveDns("q${h.marker}.battery.invalid", "A", { nameServer: { ipAddr: "127.0.0.1", port: ${h.dnsPort} } });`,
      escaped: async () => {
        await h.fence(h.dns, h.dnsSeen);
        return h.dnsSeen.includes(`q${h.marker}.battery.invalid`);
      },
    },
    unix_socket_home: {
      shell: unixConnect(`${h.home}/.terret/serve.sock`),
      deno: `(await Deno.connect({ transport: "unix", path: ${
        JSON.stringify(`${h.home}/.terret/serve.sock`)
      } })).close();`,
      escaped: () =>
        h.connectedBefore({ transport: "unix", path: `${h.home}/.terret/serve.sock` }, h.unixSeen),
    },
    docker_socket: {
      shell: unixConnect(dockerSocket),
      deno: `(await Deno.connect({ transport: "unix", path: "${dockerSocket}" })).close();
console.log("CONNECTED");`,
      escaped: (out) => out.includes("CONNECTED"),
    },
    ptrace_harness: {
      shell: `(exec 3</proc/${pid}/mem && echo OPENED)`,
      deno: `(await Deno.open("/proc/${pid}/mem")).close();\nconsole.log("OPENED");`,
      escaped: (out) => out.includes("OPENED"),
    },
    kill_harness: {
      shell: `kill -0 ${pid} && echo SIGNALLED`,
      deno: `Deno.kill(${pid}, "SIGCONT");\nconsole.log("SIGNALLED");`,
      escaped: (out) => out.includes("SIGNALLED"),
    },
    fork_bomb: {
      shell:
        `/bin/sh -c 'i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; echo "FORKED=$i"' 2>&1 | tail -1`,
      deno: `let i = 0;
for (; i < 200; i++) new Deno.Command("sleep", { args: ["3"] }).spawn();
console.log("FORKED=" + i);`,
      escaped: (out) => out.includes("FORKED=200"),
    },
    env_secrets: {
      shell: "env",
      deno: "console.log(JSON.stringify(Deno.env.toObject()));",
      escaped: (out) =>
        leaks(out) || /^(?:TERRET_|OPENROUTER_)|"(?:TERRET_|OPENROUTER_)/m.test(out),
    },
  };
}

/** A mounted tool world over the harness's workspace. */
async function mountWorld(h: Harness, subject: BatterySubject): Promise<Context> {
  const ctx = createContext({ mode: "test" });
  try {
    await new Loader(ctx).load([
      { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
      { id: "sessions", plugin: sessionsPlugin, config: {} },
      { id: "tools", plugin: ToolRegistry, config: {} },
      { id: "tools.allow", plugin: ToolAllowList, config: { allow: ["*"] } },
      // Not about approvals: every call is allowed, so none is parked.
      {
        id: "approvals",
        plugin: ApprovalsService,
        config: { allow: ["*"], always_can_be_ruled: true },
      },
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [h.ws] } },
      { id: "fs", plugin: fsPlugin, config: {} },
      { id: "sandbox", plugin: subject.sandbox.plugin, config: subject.sandbox.config },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 200 } },
      { id: "shell", plugin: shellPlugin, config: {} },
      { id: "terminals", plugin: terminalsPlugin, config: {} },
      { id: "tools.std", plugin: stdToolsPlugin, config: {} },
    ]);
    await ctx.get(SessionsKey).create({ session_id: "s1" });
  } catch (error) {
    await ctx.dispose();
    throw error;
  }
  return ctx;
}

/** Runs the whole battery against one provider and returns every outcome. */
export async function runEscapeBattery(
  subject: BatterySubject,
): Promise<{ isolated: boolean; outcomes: Record<BatteryName, BatteryOutcome> }> {
  await using h = await Harness.create();
  const ctx = await mountWorld(h, subject);
  let disposed = false;
  const leftovers: number[] = [];
  try {
    const sandbox = ctx.get(SandboxKey);
    assert.equal(sandbox.name, subject.name);
    const isolated = sandbox.isolated;
    let next = 0;
    const call = (name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
      ctx.get(ToolsKey).execute({ id: `call-${++next}`, name, args }, {
        ctx,
        session_id: "s1",
        agent_id: "agent-1",
        ...(signal === undefined ? {} : { signal }),
      });
    /** Runs a program the provider's way: `refused` when the seam said Denied, else its output. */
    const run = async (attempt: Attempt): Promise<BatteryOutcome> => {
      for (const [link, target] of attempt.plant ?? []) await Deno.symlink(target, link);
      try {
        return await runPlanted(attempt);
      } finally {
        for (const [link] of attempt.plant ?? []) await Deno.remove(link);
      }
    };
    const runPlanted = async (attempt: Attempt): Promise<BatteryOutcome> => {
      let output: string;
      if (subject.language === "shell") {
        const result = await call("Bash", { command: attempt.shell, timeout: 60_000 });
        output = textOf(result);
        if (result.is_error === true && /^Denied\b/.test(output)) return "refused";
      } else {
        const file = `${h.ws}/probe-${crypto.randomUUID()}.ts`;
        await Deno.writeTextFile(file, attempt.deno);
        try {
          const ran = await ctx.get(SubprocessKey).run([file], { cwd: h.ws, timeout: 60_000 });
          output = `${ran.stdout}\n${ran.stderr}`;
        } catch (error) {
          if ((error as { code?: string }).code === "Denied") return "refused";
          throw error;
        } finally {
          await Deno.remove(file);
        }
      }
      return (await attempt.escaped(output)) ? "escaped" : "contained";
    };
    const fsTool = async (
      name: string,
      args: Record<string, unknown>,
      escaped: () => Promise<boolean>,
    ) => {
      const result = await call(name, args);
      if (result.is_error === true && /outside the granted workspaces/.test(textOf(result))) {
        return "refused";
      }
      return (await escaped()) ? "escaped" : "contained";
    };

    const outcomes: Record<string, BatteryOutcome> = {};
    const table = attempts(h, Deno.pid);
    for (const [name] of BATTERY) {
      if (name === "fs_read_outside") {
        outcomes[name] = await fsTool(
          "Read",
          { file_path: `${h.outside}/canary` },
          () => Promise.resolve(false),
        );
      } else if (name === "fs_write_outside") {
        outcomes[name] = await fsTool(
          "Write",
          { file_path: `${h.outside}/fs-written`, content: "pwned" },
          () => Deno.lstat(`${h.outside}/fs-written`).then(() => true, () => false),
        );
      } else if (name === "setsid_cancel") {
        outcomes[name] = await setsidCancel(h, subject, ctx, call, leftovers);
      } else if (name === "setsid_dispose") {
        outcomes[name] = await setsidDispose(h, subject, ctx, call, leftovers);
        disposed = true;
      } else {
        outcomes[name] = await run(table[name]!);
      }
    }
    return { isolated, outcomes };
  } finally {
    if (!disposed) await ctx.dispose();
    for (const pid of leftovers) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

type Call = (
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<ToolResultPayload>;

async function setsidCancel(
  h: Harness,
  subject: BatterySubject,
  ctx: Context,
  call: Call,
  leftovers: number[],
): Promise<BatteryOutcome> {
  const marker = `${h.marker}1`;
  const abort = new AbortController();
  let pending: Promise<unknown>;
  if (subject.language === "shell") {
    pending = call("Bash", {
      command: twoSleeps(marker),
      timeout: 60_000,
    }, abort.signal);
  } else {
    const file = `${h.ws}/probe-${marker}.ts`;
    await Deno.writeTextFile(file, "setInterval(() => {}, 1000);");
    pending = ctx.get(SubprocessKey).run([file, `marker-${marker}`], {
      cwd: h.ws,
      signal: abort.signal,
    })
      .catch((error) => error);
  }
  const started = await settles(
    async () =>
      subject.language === "shell"
        ? await bothSleeping(marker)
        : (await pidsWith(marker)).length === 1,
    DEADLINE_MS,
  );
  abort.abort();
  await pending;
  assert.ok(started, `the cancelled program did not start under ${subject.name}`);
  const gone = await settles(async () => (await pidsWith(marker)).length === 0, 10_000);
  leftovers.push(...await pidsWith(marker));
  return gone ? "contained" : "escaped";
}

async function setsidDispose(
  h: Harness,
  subject: BatterySubject,
  ctx: Context,
  call: Call,
  leftovers: number[],
): Promise<BatteryOutcome> {
  const marker = `${h.marker}2`;
  const opened = await call("terminal_open", {
    name: "battery",
    command: twoSleeps(marker),
  });
  if (opened.is_error === true) {
    // The provider would not start the terminal (the deno sandbox runs Deno programs only).
    await ctx.dispose();
    assert.match(textOf(opened), /Cannot run/);
    return "refused";
  }
  const started = await settles(() => bothSleeping(marker), DEADLINE_MS);
  assert.ok(started, `the terminal's programs did not start under ${subject.name}`);
  await ctx.dispose();
  const gone = await settles(async () => (await pidsWith(marker)).length === 0, 10_000);
  leftovers.push(...await pidsWith(marker));
  return gone ? "contained" : "escaped";
}

const CONTAINED = "contained" as const;

/**
 * What the host's own user cannot do here, tried from this process: read `/etc/shadow` (only root may) and connect
 * to the Docker socket (root or the `docker` group, and only where an engine runs). A program a provider runs as
 * the host's user fails at these the same way, so for such a provider they are `contained`.
 */
export async function hostLimits(): Promise<Partial<Record<BatteryName, BatteryOutcome>>> {
  const limits: Partial<Record<BatteryName, BatteryOutcome>> = {};
  const shadow = await Deno.readTextFile("/etc/shadow").catch(() => "");
  if (shadow === "") limits.read_shadow = CONTAINED;
  try {
    (await Deno.connect({ transport: "unix", path: "/var/run/docker.sock" })).close();
  } catch {
    limits.docker_socket = CONTAINED;
  }
  return limits;
}

/**
 * The outcome of every attempt per provider: what each provider's battery test asserts, and what docs/security.md
 * shows (`tests/security/escape_table_test.ts` fails when the two differ).
 */
export const EXPECTED_ESCAPES: Readonly<
  Record<"none" | "deno" | "docker" | "bwrap", Readonly<Record<BatteryName, BatteryOutcome>>>
> = {
  // Not isolated: the shell runs on the host as the host's user. Only the fs tools refuse, and the seam passes no
  // host secret variables. (Where the host's user itself may not read /etc/shadow or reach the Docker socket, the
  // battery expects those contained: see hostLimits.)
  none: Object.fromEntries(BATTERY.map(([name]) => [
    name,
    name.startsWith("fs_") ? "refused" : name === "env_secrets" ? "contained" : "escaped",
  ])),
  // Deno programs only: bash (the shell, a terminal) is refused; a workspace holding a link that leads out is
  // refused (Deno's permissions do not resolve links); everything else fails on a permission.
  deno: Object.fromEntries(BATTERY.map(([name]) => [
    name,
    ["fs_read_outside", "fs_write_outside", "write_symlink", "write_dangling", "setsid_dispose"]
        .includes(name)
      ? "refused"
      : CONTAINED,
  ])),
  docker: Object.fromEntries(BATTERY.map(([name]) => [
    name,
    name.startsWith("fs_") ? "refused" : CONTAINED,
  ])),
  bwrap: Object.fromEntries(BATTERY.map(([name]) => [
    name,
    name.startsWith("fs_") ? "refused" : CONTAINED,
  ])),
};

/** Registers the battery's test for one provider (skipped loudly with `skip`). */
export function testEscapeBattery(subject: BatterySubject, skip?: string): void {
  if (skip !== undefined) console.warn(`\n!!! SKIPPED: ${subject.name} escape battery: ${skip}\n`);
  Deno.test({
    name: `${subject.name} sandbox escape battery (through the tools and the shell)`,
    ignore: skip !== undefined,
    async fn() {
      const { isolated, outcomes } = await runEscapeBattery(subject);
      assert.deepStrictEqual(outcomes, { ...subject.expected, ...await subject.hostLimits?.() });
      const escaped = BATTERY.map(([name]) => name).filter((name) => outcomes[name] === "escaped");
      if (isolated) assert.deepStrictEqual(escaped, [], "isolated: true lets nothing escape");
      else {assert.notDeepStrictEqual(
          escaped,
          [],
          "a provider that lets nothing escape says isolated",
        );}
    },
  });
}

/** The Markdown table of every provider's expected outcomes (each asserted by its provider's battery test). */
export function renderEscapeTable(subjects: readonly BatterySubject[]): string {
  const header = ["escape attempt", ...subjects.map((s) => s.name)];
  const rows = BATTERY.map((
    [name, label],
  ) => [label, ...subjects.map((s) => s.expected[name] ?? "")]);
  const widths = header.map((cell, i) =>
    Math.max(cell.length, ...rows.map((row) => row[i]!.length))
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)]
    .join("\n");
}
