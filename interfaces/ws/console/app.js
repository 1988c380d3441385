// The web console (docs/console.md): sign-in, the agents list, and one agent's transcript with its controls. One
// more protocol v1 client: it reads GET /v1/agents and opens /v1/agents/{id}/stream with the token it is given.
import { AgentsList } from "./agents_list.js";
import { Connection, logAction, settle } from "./connection.js";
import { $, show } from "./dom.js";
import { EventView } from "./events_view.js";
import { Transcript } from "./transcript.js";

const KEY = "terret.console.token";

const state = {
  token: sessionStorage.getItem(KEY),
  agentId: null,
  /** The last seq shown: a reconnect subscribes from the next one. */
  lastSeq: 0,
  /** The head the server named in its last hello: short of it, a replay is still running. */
  replayTo: 0,
};

const transcript = new Transcript({
  replaying: () => state.lastSeq < state.replayTo,
  painted: () => {
    $("seq").textContent = "seq " + state.lastSeq;
    agents.paintLive();
  },
});
const agents = new AgentsList({
  token: () => state.token,
  unauthorized: () => {
    state.token = null;
    sessionStorage.removeItem(KEY);
    show("login");
    $("login-error").textContent =
      "Sign-in failed: the server refused the token (401 unauthorized)";
  },
  open: openAgent,
  changed: () => transcript.schedule(),
});
const connection = new Connection({
  frame: onFrame,
  lost: function (close) {
    const why = close.code + (close.reason ? " " + close.reason : "");
    setConn("disconnected (" + why + "), reconnecting from seq " + (state.lastSeq + 1), "bad");
    transcript.notice(
      "Connection lost (" + why + "); reconnecting from seq " + (state.lastSeq + 1),
    );
  },
  status: setConn,
});
const events = new EventView(transcript, (frame) => connection.send(frame));

function login(event) {
  event.preventDefault();
  const token = $("token").value.trim();
  $("token").value = "";
  if (token === "") return;
  state.token = token;
  agents.load().then(function (ok) {
    if (ok) {
      sessionStorage.setItem(KEY, token);
      openList();
    }
  });
}
function logout() {
  sessionStorage.removeItem(KEY);
  state.token = null;
  connection.close();
  agents.stopPolling();
  $("login-error").textContent = "";
  show("login");
}
function openList() {
  connection.close();
  show("agents");
  agents.startPolling();
}

function openAgent(agentId) {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(agentId)) {
    $("agents-error").textContent = 'Opening an agent failed: invalid agent id "' + agentId + '"';
    return;
  }
  connection.close();
  agents.stopPolling();
  state.agentId = agentId;
  state.lastSeq = 0;
  events.reset();
  transcript.reset();
  $("banner").hidden = true;
  $("banner").replaceChildren();
  agents.closeLive();
  $("approvals").replaceChildren();
  $("actions-log").replaceChildren();
  $("agent-name").textContent = agentId;
  show("transcript");
  connection.open(state.token, agentId);
}
function setConn(text, cls) {
  const node = $("conn");
  node.textContent = text;
  node.className = "conn " + cls;
}

function onFrame(frame) {
  switch (frame.type) {
    case "hello":
      state.replayTo = frame.head_seq;
      if (connection.greeted()) {
        transcript.notice("Reconnected; resuming from seq " + (state.lastSeq + 1));
      }
      agents.openLive(state.agentId, frame.head_seq);
      setConn("live", "ok");
      connection.sendRaw({ type: "subscribe", from_seq: state.lastSeq + 1 });
      return;
    case "event": {
      const event = frame.event;
      if (typeof event.seq !== "number" || event.seq <= state.lastSeq) return;
      state.lastSeq = event.seq;
      events.render(event);
      agents.follow(event);
      return;
    }
    case "ack":
      settle(frame.ref, "ack " + frame.ref, "ok");
      return;
    case "error": {
      const text = "error " + frame.code + ": " + frame.message;
      if (frame.ref === null || frame.ref === undefined) logAction(text, "error");
      else settle(frame.ref, text + " (" + frame.ref + ")", "error");
      return;
    }
    case "replay_truncated":
      transcript.notice(
        "Replay truncated: events from seq " + frame.requested_from_seq + " to " +
          (frame.from_seq - 1) +
          " are not shown (the server replays at most its replay limit)",
      );
      state.lastSeq = frame.from_seq - 1;
      return;
    case "lagged":
      transcript.notice(
        "This view fell behind the stream (lagged at seq " + frame.last_seq + "); reconnecting",
      );
      return;
  }
}

function sendMessage(event) {
  event.preventDefault();
  const text = $("message").value;
  if (text.trim() === "") return;
  connection.send({ type: "message", content: text });
  $("message").value = "";
}

document.addEventListener("DOMContentLoaded", function () {
  $("login-form").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  $("filter").addEventListener("input", () => agents.render());
  $("open-form").addEventListener("submit", function (event) {
    event.preventDefault();
    openAgent($("open-id").value.trim());
  });
  $("back").addEventListener("click", openList);
  $("lines").addEventListener("scroll", () => transcript.onScroll(), { passive: true });
  $("send-form").addEventListener("submit", sendMessage);
  $("steer-form").addEventListener("submit", function (event) {
    event.preventDefault();
    const text = $("steer").value;
    if (text.trim() === "") return;
    connection.send({ type: "steer", content: text, wake: $("steer-wake").checked });
    $("steer").value = "";
  });
  $("policy-form").addEventListener("submit", function (event) {
    event.preventDefault();
    const allow = $("policy").value.split(",").map(function (x) {
      return x.trim();
    }).filter(function (x) {
      return x !== "";
    });
    connection.send({ type: "set_policy", allow: allow });
  });
  $("cancel").addEventListener("click", function () {
    connection.send({ type: "cancel", reason: "cancelled from the console" });
  });
  if (state.token) openList();
  else show("login");
});
