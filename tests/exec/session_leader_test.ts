/**
 * A Terret process that leads its own session and has no controlling terminal, as a service manager starts it
 * (systemd, `setsid`, a container's init), survives its terminals: opening one must not make the terminal its
 * controlling terminal, or the hang-up when the program exits and the terminal closes reaches it as SIGHUP and
 * kills the whole host; and each program must get its terminal as its own controlling terminal.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const FIXTURE = fileURLToPath(
  new URL("../fixtures/exec/session_leader_terminals.ts", import.meta.url),
);

/** Terminals opened: the host and the program race for the terminal at each open, so one open proves little. */
const CYCLES = 20;

Deno.test("a session leader without a controlling terminal survives the terminals it opens and closes", async () => {
  // `setsid --wait` runs the fixture as the leader of a new session, with no controlling terminal.
  const out = await new Deno.Command("setsid", {
    args: ["--wait", Deno.execPath(), "run", "-A", FIXTURE, String(CYCLES)],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.deepStrictEqual(
    { code: out.code, signal: out.signal },
    { code: 0, signal: null },
    `the fixture died: ${stderr}`,
  );
  assert.deepStrictEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
    leader: true,
    exited: CYCLES,
    held: 0,
  });
});
