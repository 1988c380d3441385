// The open agent's stream socket (/v1/agents/{id}/stream, protocol v1): connecting with the token as a subprotocol,
// reconnecting with backoff, sending frames with refs, and the log of what was sent and how it was answered.
import { $, el } from "./dom.js";

/**
 * One agent's socket at a time. `hooks.frame(frame)` gets every frame parsed; `hooks.lost(close)` runs when the
 * socket closes while still wanted (a reconnect follows, with backoff); `hooks.status(text, cls)` shows its state.
 */
export class Connection {
  #hooks;
  #token = null;
  #agentId = null;
  #socket = null;
  #wanted = false;
  #ref = 0;
  #timer = null;
  /** How many reconnects in a row (0 once a hello came). */
  #retry = 0;

  constructor(hooks) {
    this.#hooks = hooks;
  }

  /** Connects to `agentId`'s stream with `token` (closing any other first). */
  open(token, agentId) {
    this.close();
    this.#token = token;
    this.#agentId = agentId;
    this.#wanted = true;
    this.#connect();
  }

  /** Closes the socket for good (no reconnect). */
  close() {
    this.#wanted = false;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#socket !== null) {
      const s = this.#socket;
      this.#socket = null;
      s.close(1000, "console closed");
    }
  }

  /** The server said hello: true when this socket is a reconnect (the count starts again). */
  greeted() {
    const reconnected = this.#retry > 0;
    this.#retry = 0;
    return reconnected;
  }

  /** Sends a protocol frame as is (the subscribe after hello). */
  sendRaw(frame) {
    this.#socket.send(JSON.stringify(frame));
  }

  /** Sends a command frame with a fresh ref, logged until its ack or error settles it. */
  send(frame) {
    if (this.#socket === null || this.#socket.readyState !== WebSocket.OPEN) {
      logAction("not connected: " + frame.type + " was not sent", "error");
      return;
    }
    this.#ref++;
    frame.ref = "c" + this.#ref;
    this.#socket.send(JSON.stringify(frame));
    logAction(frame.type + " sent (" + frame.ref + ")", "pending", frame.ref);
  }

  #connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const url = scheme + location.host + "/v1/agents/" + this.#agentId + "/stream";
    let socket;
    try {
      socket = new WebSocket(url, ["terret.v1", "bearer." + this.#token]);
    } catch (error) {
      this.#hooks.status("connect failed: " + error.message, "bad");
      return;
    }
    this.#socket = socket;
    this.#hooks.status(this.#retry > 0 ? "reconnecting" : "connecting", "wait");
    socket.onmessage = (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch (_) {
        return;
      }
      this.#hooks.frame(frame);
    };
    socket.onclose = (close) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      if (!this.#wanted) return;
      this.#retry++;
      const delay = Math.min(5000, 250 * Math.pow(2, Math.min(this.#retry, 5)));
      this.#hooks.lost(close);
      this.#timer = setTimeout(() => {
        this.#timer = null;
        if (this.#wanted) this.#connect();
      }, delay);
    };
  }
}

/** Adds a line to the actions log (the newest first, the last 50 kept); `ref` ties it to its answer. */
export function logAction(text, cls, ref) {
  const item = el("li", "action " + cls, text);
  if (ref) item.dataset.ref = ref;
  $("actions-log").prepend(item);
  while ($("actions-log").children.length > 50) $("actions-log").lastChild.remove();
}

/** Rewrites the log line of the frame sent with `ref` (an ack or an error answered it), or adds one. */
export function settle(ref, text, cls) {
  const items = $("actions-log").querySelectorAll("li");
  for (let i = 0; i < items.length; i++) {
    if (items[i].dataset.ref === String(ref)) {
      items[i].textContent = text;
      items[i].className = "action " + cls;
      return;
    }
  }
  logAction(text, cls);
}
