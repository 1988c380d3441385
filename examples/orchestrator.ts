// deno-lint-ignore-file no-console
/**
 * A small orchestrator client for Terret's socket (docs/protocol.md): it connects to one agent, sends a message,
 * prints every event of the agent's log as it arrives, and when the connection drops it reconnects with jittered
 * backoff and subscribes from its last seq + 1, so it sees every event exactly once. It exits when the turn that
 * answered its message has ended.
 *
 * Run (with `trt serve` running):
 *
 *     deno run -A examples/orchestrator.ts demo "What is on my list? It is in /tmp/terret-demo/notes.txt."
 *
 * Flags: `--url ws://127.0.0.1:7878` (default), `--token T` (default: $TERRET_TOKEN, else the token file `trt serve`
 * generated, `$TERRET_HOME/ws/token` with `TERRET_HOME` defaulting to `~/.terret`), `--follow` (keep watching after
 * the turn), `--from N` (the first seq to print; default 1: the whole log). Without a message it only watches.
 *
 * @module
 */

interface Options {
  url: string;
  token: string;
  agent: string;
  message: string | undefined;
  follow: boolean;
  from: number;
}

interface SessionEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}

async function options(args: readonly string[]): Promise<Options> {
  const rest: string[] = [];
  let url = "ws://127.0.0.1:7878";
  let token = Deno.env.get("TERRET_TOKEN") || undefined;
  let follow = false;
  let from = 1;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--url") url = args[++i]!;
    else if (arg === "--token") token = args[++i]!;
    else if (arg === "--follow") follow = true;
    else if (arg === "--from") from = Number(args[++i]);
    else rest.push(arg);
  }
  const [agent, ...words] = rest;
  if (agent === undefined || !Number.isSafeInteger(from) || from < 1) {
    console.error(
      "usage: orchestrator.ts [--url URL] [--token T] [--follow] [--from N] AGENT_ID [MESSAGE]",
    );
    Deno.exit(2);
  }
  if (token === undefined) {
    const home = Deno.env.get("TERRET_HOME") ?? `${Deno.env.get("HOME")}/.terret`;
    const file = `${home}/ws/token`;
    try {
      token = (await Deno.readTextFile(file)).trim();
    } catch {
      console.error(
        `No token: pass --token, set TERRET_TOKEN, or start trt serve (it writes ${file})`,
      );
      Deno.exit(2);
    }
  }
  return {
    url,
    token,
    agent,
    message: words.length > 0 ? words.join(" ") : undefined,
    follow,
    from,
  };
}

/** One line per event: `#seq type  summary`. */
function describe(event: SessionEvent): string {
  const p = event.payload;
  const text = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
      ? content.map((part) => part.type === "text" ? part.text : `[${part.type}]`).join("")
      : JSON.stringify(content);
  const clip = (value: string, max = 160): string =>
    value.length > max ? `${value.slice(0, max)}…` : value;
  let summary: string;
  switch (event.type) {
    case "user/message":
    case "context/injected":
      summary = clip(text(p.content));
      break;
    case "assistant/chunk":
      summary = `${p.kind === "thinking" ? "(thinking) " : ""}${JSON.stringify(p.text)}`;
      break;
    case "assistant/message":
      summary = (p.parts as { type: string; text?: string; name?: string; args?: unknown }[])
        .map((part) =>
          part.type === "tool_call"
            ? `${part.name}(${JSON.stringify(part.args)})`
            : part.type === "thinking"
            ? "(thinking)"
            : clip(part.text ?? "")
        ).join(" ");
      break;
    case "tool/call":
      summary = `${p.name}(${JSON.stringify(p.args)})`;
      break;
    case "tool/result":
      summary = `${p.name}${p.is_error ? " failed" : ""}: ${JSON.stringify(clip(text(p.content)))}`;
      break;
    case "step/end":
      summary = `${p.finish_reason}, ${JSON.stringify(p.usage)}`;
      break;
    case "turn/end":
      summary = `${p.status}${
        p.error === undefined ? "" : `: ${(p.error as { message?: string }).message}`
      }`;
      break;
    default:
      summary = clip(JSON.stringify(p));
  }
  return `#${event.seq} ${event.type.padEnd(17)} ${summary}`;
}

const opts = await options(Deno.args);
let lastSeq = opts.from - 1;
let sent = false; // the message was acked: it is in the agent's inbox
let logged = false; // our message is in the log as user/message
let done = false;
let attempt = 0;
let refused = 0; // connections in a row that never opened

while (!done) {
  const outcome = await session();
  if (outcome === "done") break;
  if (outcome === "fatal") Deno.exit(1);
  const wait = Math.min(5000, 250 * 2 ** attempt++) * (0.5 + Math.random() / 2);
  console.log(`-- connection lost; reconnecting in ${Math.round(wait)} ms from seq ${lastSeq + 1}`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}

/** One connection: resolves with what to do next. */
function session(): Promise<"done" | "retry" | "fatal"> {
  const url = `${opts.url}/v1/agents/${opts.agent}/stream`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${opts.token}` } });
  return new Promise((resolve) => {
    let opened = false;
    socket.onopen = () => {
      opened = true;
      attempt = 0;
      refused = 0;
    };
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data as string);
      switch (frame.type) {
        case "hello":
          console.log(
            `-- connected to ${frame.agent_id} (session ${frame.session_id}, head ${frame.head_seq})`,
          );
          socket.send(JSON.stringify({ type: "subscribe", from_seq: lastSeq + 1, ref: "sub" }));
          if (opts.message !== undefined && !sent) {
            socket.send(JSON.stringify({ type: "message", content: opts.message, ref: "msg" }));
          }
          break;
        case "ack":
          if (frame.ref === "msg") sent = true;
          break;
        case "error":
          console.error(`-- refused (${frame.code}): ${frame.message}`);
          break;
        case "replay_truncated":
          console.log(
            `-- the server replays from seq ${frame.from_seq} (older events are not sent)`,
          );
          lastSeq = frame.from_seq - 1;
          break;
        case "lagged":
          console.log(`-- the server dropped this reader as lagged after seq ${frame.last_seq}`);
          break;
        case "event": {
          const event = frame.event as SessionEvent;
          if (event.seq !== lastSeq + 1) {
            console.error(`-- gap or duplicate: expected seq ${lastSeq + 1}, got ${event.seq}`);
          }
          lastSeq = event.seq;
          console.log(describe(event));
          if (
            event.type === "user/message" && sent && opts.message !== undefined &&
            event.payload.content === opts.message
          ) logged = true;
          if (event.type === "turn/end" && logged && !opts.follow) {
            done = true;
            socket.close(1000);
          }
          break;
        }
      }
    };
    socket.onerror = () => {
      if (!opened) console.error(`-- cannot connect to ${url}`);
    };
    socket.onclose = (event) => {
      if (done) return resolve("done");
      if (!opened && ++refused >= 5) {
        console.error("-- giving up: check the URL, and the token (a wrong one gets 401)");
        return resolve("fatal");
      }
      if (event.code === 4009) {
        console.error("-- another connection took over this agent (4009 superseded)");
        return resolve("fatal");
      }
      resolve("retry");
    };
  });
}
