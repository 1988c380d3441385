/**
 * `trt serve` as a real process for the socket tests: started with a home and patches, read until it is up, stopped
 * with SIGTERM.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { CASSETTES } from "@terret/core/testing";
import { within } from "./_clients.ts";

/** The repository root. */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));

/** A running `trt serve`. */
export interface Served {
  /** The socket's port, read from what serve printed. */
  readonly port: number;
  /** The serving process's id. */
  readonly pid: number;
  /** stdout lines so far. */
  readonly lines: string[];
  /** Sends SIGTERM and resolves with the exit code, stdout lines and stderr once it has exited. */
  stop(): Promise<{ code: number; lines: string[]; stderr: string }>;
  /** Sends SIGKILL (no shutdown runs) and resolves once the process has exited. */
  kill(): Promise<void>;
}

/**
 * Starts `trt serve --home home --patch …` (no model key, no TERRET_TOKEN unless `env` sets them) and waits until
 * it runs.
 */
export async function serve(
  home: string,
  patches: readonly string[],
  options: {
    readonly scoped?: boolean;
    readonly args?: readonly string[];
    readonly env?: Readonly<Record<string, string>>;
  } = {},
): Promise<Served> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      MAIN,
      "serve",
      "--home",
      home,
      ...patches.flatMap((patch) => ["--patch", patch]),
      ...(options.scoped === true ? ["--scoped"] : []),
      ...(options.args ?? []),
    ],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "", ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  let out = "";
  const read = async (): Promise<boolean> => {
    const { value, done } = await reader.read();
    if (done) return false;
    out += value;
    return true;
  };
  try {
    await within(
      (async () => {
        while (!out.includes("running until SIGINT or SIGTERM\n")) {
          if (!await read()) throw new Error(`serve exited: ${out}${await stderr}`);
        }
      })(),
      60_000,
      "trt serve to come up",
    );
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // It has exited already.
    }
    await child.status;
    throw error;
  }
  const port = Number(/ws:\/\/127\.0\.0\.1:(\d+)\//.exec(out)![1]);
  return {
    port,
    pid: child.pid,
    lines: out.split("\n"),
    async stop() {
      child.kill("SIGTERM");
      while (await read());
      const status = await child.status;
      return { code: status.code, lines: out.split("\n"), stderr: await stderr };
    },
    async kill() {
      child.kill("SIGKILL");
      while (await read());
      await child.status;
      await stderr;
    },
  };
}

/**
 * The text of a `serve` patch whose model is the shipped plain-text cassette, replayed in sequence (no request leaves
 * the process), with no docker (the sandbox row names a CLI that is not there: serve says so and runs on) and no
 * titles (the cassette records the turns only), then `rows` (YAML lines of more rows), then the `interfaces.ws` row
 * with `ws` as its config (one YAML line, or lines indented under it).
 */
export function replayedServePatch(
  ws: string | readonly string[],
  rows: readonly string[] = [],
): string {
  return [
    "rows:",
    "  - id: sandbox",
    "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
    "  - id: llm.main",
    "    config: { model: anthropic/claude-sonnet-4.5, api_key: replayed-no-request-leaves }",
    "  - id: llm.replayer",
    "    plugin: terret-llm-replayer",
    "    after: llm.main",
    `    config: { path: ${fileURLToPath(CASSETTES.plainText)}, match: sequence }`,
    "  - id: titles",
    "    config: { auto: false }",
    ...rows,
    "  - id: interfaces.ws",
    ...(typeof ws === "string" ? [`    config: ${ws}`] : ["    config:", ...ws]),
    "",
  ].join("\n");
}
