/**
 * One persistent bash on a pty, driven by a sentinel protocol.
 *
 * The protocol: a non-interactive bash ({@linkcode bashArgv}: no prompts, no job control, no history) reads
 * commands from the terminal with echo, canonical mode (and its 4096-byte line limit) and `\n` → `\r\n`
 * translation turned off. Each command is sent as ONE input line,
 *
 *     \builtin eval $'<command, escaped>' </dev/null; \builtin printf '\036TRT%s:%s\036' <nonce> "$?"
 *
 * so bash has consumed the whole line before the command runs (a command reading stdin reads `/dev/null`, never
 * the sentinel), and the end of the command is the exact byte sequence `RS "TRT" nonce ":" status RS` with a fresh
 * 128-bit nonce per command. Output the command prints (a forged marker, an earlier command's marker, the echo of
 * the line were echo still on) cannot match: the nonce is new and the RS bytes exist only in printf's output.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import type { ExitStatus, PtyHandle } from "@terret/core/seams";
import type { Subprocess } from "@terret/core";
import { HeadTailCapture } from "./_capture.ts";

/** What one command produced. */
export interface CommandOutcome {
  /** The terminal output (stdout and stderr as the terminal showed them), head and tail kept under the cap. */
  readonly output: string;
  /** Bytes dropped by the cap. */
  readonly truncated: number;
  /** The command's exit status, or the shell's when the command ended it; null when the session was killed. */
  readonly exitCode: number | null;
  /** True when the session is gone after this command (it exited, or it was killed). */
  readonly sessionEnded: boolean;
}

/** Options of {@linkcode ShellSession.start}. */
export interface SessionStart {
  readonly bash: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly cols: number;
  readonly rows: number;
  readonly startTimeoutMs: number;
}

interface Running {
  readonly marker: RegExp;
  readonly capture: HeadTailCapture;
  readonly resolve: (outcome: CommandOutcome) => void;
}

const HOLD = 1 + 3 + 32 + 1 + 3 + 1;
const encoder = new TextEncoder();

/** A persistent bash session. */
export class ShellSession {
  readonly #pty: PtyHandle;
  #pending = "";
  #idle: string[] = [];
  #running: Running | undefined;
  #exit: ExitStatus | undefined;

  private constructor(pty: PtyHandle) {
    this.#pty = pty;
    pty.onData((data) => this.#receive(data));
    void pty.exited.then((exit) => {
      this.#exit = exit;
      this.#finish(exit.signal === null ? exit.code : null);
    });
  }

  /**
   * Starts bash on a pty and waits until it is quiet and ready.
   *
   * @throws {TerretError} `ShellFailed` when bash exits or stays silent past `startTimeoutMs`
   */
  static async start(subprocess: Subprocess, options: SessionStart): Promise<ShellSession> {
    const pty = await subprocess.ptySpawn(bashArgv(options.bash), {
      cwd: options.cwd,
      env: options.env,
      cols: options.cols,
      rows: options.rows,
    });
    const session = new ShellSession(pty);
    const nonce = newNonce();
    const ready = session.#expect(new RegExp(`\x1eTRTREADY${nonce}\x1e`), 4096);
    pty.write(
      "exec 2>&1; stty -echo -onlcr -icanon min 1 time 0 2>/dev/null; set +m +H; " +
        `\\builtin printf '\\036TRTREADY%s\\036' ${nonce}\n`,
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      ready,
      new Promise<"timeout">((resolve) =>
        timer = setTimeout(resolve, options.startTimeoutMs, "timeout")
      ),
    ]);
    clearTimeout(timer);
    if (outcome === "timeout" || outcome.sessionEnded) {
      await session.kill();
      const output = outcome === "timeout" ? "" : outcome.output.trim();
      throw new TerretError(
        "ShellFailed",
        `Cannot start a shell with "${options.bash}": ${
          outcome === "timeout" ? `no answer within ${options.startTimeoutMs} ms` : "it exited"
        }${output === "" ? "" : ` (${output.slice(0, 200)})`}`,
      );
    }
    session.#idle = [];
    return session;
  }

  /** The host pid of bash (its process group id). */
  get pid(): number {
    return this.#pty.pid;
  }

  /** True once bash has exited. */
  get ended(): boolean {
    return this.#exit !== undefined;
  }

  /**
   * Runs one command and resolves when its sentinel arrives or the session ends. The caller serializes calls and
   * kills the session to stop a command.
   */
  run(command: string, maxOutput: number): Promise<CommandOutcome> {
    if (this.#running !== undefined) throw new Error("ShellSession.run called while running");
    const nonce = newNonce();
    const outcome = this.#expect(new RegExp(`\x1eTRT${nonce}:(\\d{1,3})\x1e`), maxOutput);
    this.#pty.write(
      `\\builtin eval ${ansiQuote(command)} </dev/null; ` +
        `\\builtin printf '\\036TRT%s:%s\\036' ${nonce} "$?"\n`,
    );
    return outcome;
  }

  /** Kills bash's whole process group; a running command resolves with `sessionEnded`. */
  async kill(): Promise<void> {
    await this.#pty.kill();
  }

  #expect(marker: RegExp, maxOutput: number): Promise<CommandOutcome> {
    return new Promise((resolve) => {
      const capture = new HeadTailCapture(maxOutput);
      for (const text of this.#idle) capture.push(encoder.encode(text));
      this.#idle = [];
      this.#running = { marker, capture, resolve };
      if (this.#exit !== undefined) {
        this.#finish(this.#exit.signal === null ? this.#exit.code : null);
      }
    });
  }

  #receive(data: string): void {
    const running = this.#running;
    if (running === undefined) {
      this.#idle.push(data);
      return;
    }
    this.#pending += data;
    const match = running.marker.exec(this.#pending);
    if (match !== null) {
      running.capture.push(encoder.encode(this.#pending.slice(0, match.index)));
      const rest = this.#pending.slice(match.index + match[0].length);
      this.#pending = "";
      if (rest !== "") this.#idle.push(rest);
      this.#settle(running, Number(match[1] ?? 0), false);
      return;
    }
    if (this.#pending.length > HOLD) {
      let cut = this.#pending.length - HOLD;
      const code = this.#pending.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut--;
      running.capture.push(encoder.encode(this.#pending.slice(0, cut)));
      this.#pending = this.#pending.slice(cut);
    }
  }

  #finish(exitCode: number | null): void {
    const running = this.#running;
    if (running === undefined) return;
    running.capture.push(encoder.encode(this.#pending));
    this.#pending = "";
    this.#settle(running, exitCode, true);
  }

  #settle(running: Running, exitCode: number | null, ended: boolean): void {
    this.#running = undefined;
    running.resolve({
      output: running.capture.text(),
      truncated: running.capture.dropped,
      exitCode,
      sessionEnded: ended,
    });
  }
}

/**
 * The argv of a session's bash: a non-interactive bash reading commands from the terminal (`-s` with stderr
 * not a terminal at startup, restored to the terminal by the first line), so it prints no prompts, no job
 * notices and no `exit`, and SIGTERM ends it.
 */
export function bashArgv(bash: string): string[] {
  return [bash, "--noprofile", "--norc", "-c", 'exec "$0" --noprofile --norc -s 2>/dev/null', bash];
}

function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Quotes `text` as one bash `$'…'` word on one line: backslash, quote and every control character are escaped,
 * so the line discipline sees no newline, no signal character and no flow-control byte from the command.
 */
export function ansiQuote(text: string): string {
  let out = "$'";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === "\\") out += "\\\\";
    else if (char === "'") out += "\\'";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += char;
  }
  return out + "'";
}
