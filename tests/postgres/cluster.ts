/**
 * The PostgreSQL test lane: a throwaway cluster per test file. `initdb` in a temp dir as an unprivileged user (the
 * `postgres` user when the tests run as root), `pg_ctl start` on a free loopback port with its unix socket in the
 * same dir, a database per {@linkcode PgCluster.createDatabase}, and `pg_ctl stop -m immediate` plus removal of the
 * dir when the test process unloads. Without PostgreSQL the lane is SKIPPED loudly (and fails in CI, where
 * `.ci/run` installs it).
 *
 * @module
 */
import { skipLane } from "../lane.ts";
import { stablePort } from "../ports.ts";
import { shellWord } from "../shell_words.ts";

/** A running throwaway cluster. */
export interface PgCluster {
  /** The loopback port it listens on. */
  readonly port: number;
  /** Its data directory's parent (also its unix socket directory). */
  readonly dir: string;
  /** The superuser it was initialised with (trust authentication on loopback). */
  readonly user: string;
  /** A URL for database `db` (with a password, which trust authentication ignores, so tests can check redaction). */
  url(db: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the cluster (`-m fast`: clients are disconnected) and leaves it stopped. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops and removes it (also done when the process unloads). */
  destroy(): void;
}

/** The result of {@linkcode postgresLane}: a cluster, or why there is none. */
export type PgLane = { readonly skip: string; readonly cluster: undefined } | {
  readonly skip: undefined;
  readonly cluster: PgCluster;
};

const USER = "terret";
const PASSWORD = "s3cret-test-password";

/** Finds PostgreSQL's server binaries: `initdb` on PATH, else the newest under /usr/lib/postgresql. */
export function postgresBin(): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    // Debian links some binaries onto PATH; the rest (psql among them) sit beside the real one.
    if (exists(`${dir}/initdb`)) return Deno.realPathSync(`${dir}/initdb`).replace(/\/initdb$/, "");
  }
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((e) => e.name)
      .filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const dir = `/usr/lib/postgresql/${version}/bin`;
      if (exists(`${dir}/initdb`)) return dir;
    }
  } catch { /* no distribution packages */ }
  return undefined;
}

/**
 * Starts a throwaway cluster for this test file, or reports (loudly; throwing in CI) why it cannot. Pass `skip` to
 * each test's `ignore`.
 */
export async function postgresLane(): Promise<PgLane> {
  const bin = postgresBin();
  if (bin === undefined) {
    return {
      skip: skipLane("postgres", "PostgreSQL is not installed (apt-get install -y postgresql)"),
      cluster: undefined,
    };
  }
  try {
    return { skip: undefined, cluster: await startCluster(bin) };
  } catch (error) {
    return {
      skip: skipLane("postgres", `a throwaway cluster did not start: ${(error as Error).message}`),
      cluster: undefined,
    };
  }
}

async function startCluster(bin: string): Promise<PgCluster> {
  const dir = await Deno.makeTempDir({ prefix: "terret-pg-" });
  const data = `${dir}/data`;
  const asRoot = Deno.uid() === 0;
  if (asRoot) await run("chown", ["postgres:postgres", dir]);
  const as = (program: string, args: string[]): [string, string[]] =>
    asRoot ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  // Postgres binds it only after initdb: a port no parallel test's socket is handed meanwhile.
  const port = stablePort();
  await run(...as(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    USER,
    "--auth=trust",
    "--no-sync",
    "--encoding=UTF8",
    "--locale=C",
  ]));
  const options = [
    `-p ${port}`,
    // pg_ctl hands the options to postgres through a shell.
    `-k ${shellWord(dir)}`,
    "-c listen_addresses=127.0.0.1",
    "-c max_connections=300",
    "-c shared_buffers=32MB",
  ].join(" ");
  const ctl = (args: string[]): Promise<void> =>
    run(...as(`${bin}/pg_ctl`, ["-D", data, "-l", `${dir}/log`, "-o", options, "-w", ...args]));
  let destroyed = false;
  const destroy = (): void => {
    if (destroyed) return;
    destroyed = true;
    globalThis.removeEventListener("unload", destroy);
    const [program, args] = as(`${bin}/pg_ctl`, ["-D", data, "-m", "immediate", "stop"]);
    try {
      new Deno.Command(program, { args, stdout: "null", stderr: "null" }).outputSync();
    } catch { /* already stopped */ }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* already gone */ }
  };
  globalThis.addEventListener("unload", destroy);
  try {
    await ctl(["start"]);
  } catch (error) {
    destroy();
    throw error;
  }
  const url = (db: string): string =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(db)}`;
  return {
    port,
    dir,
    user: USER,
    url,
    async createDatabase(name: string): Promise<string> {
      await run(`${bin}/psql`, [
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        USER,
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        `CREATE DATABASE "${name.replaceAll('"', '""')}"`,
      ]);
      return url(name);
    },
    stop: () => ctl(["-m", "fast", "stop"]),
    start: () => ctl(["start"]),
    destroy,
  };
}

async function run(program: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(program, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  if (out.code !== 0) {
    const text = new TextDecoder().decode(out.stderr).trim() ||
      new TextDecoder().decode(out.stdout).trim();
    throw new Error(`${program.split("/").at(-1)} ${args.join(" ")} exited ${out.code}: ${text}`);
  }
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
