"use strict";
(function () {
  const KEY = "terret.console.token";
  const $ = function (id) {
    return document.getElementById(id);
  };
  const el = function (tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const state = {
    token: sessionStorage.getItem(KEY),
    agents: [],
    agentId: null,
    socket: null,
    lastSeq: 0,
    wanted: false,
    ref: 0,
    streaming: null,
    tools: {},
    retry: 0,
    timer: null,
    poll: null,
  };

  function show(view) {
    ["login", "agents", "transcript"].forEach(function (name) {
      $(name).hidden = name !== view;
    });
  }
  function authHeaders() {
    return { authorization: "Bearer " + state.token };
  }

  function login(event) {
    event.preventDefault();
    const token = $("token").value.trim();
    $("token").value = "";
    if (token === "") return;
    state.token = token;
    loadAgents().then(function (ok) {
      if (ok) {
        sessionStorage.setItem(KEY, token);
        openList();
      }
    });
  }
  function logout() {
    sessionStorage.removeItem(KEY);
    state.token = null;
    closeSocket();
    if (state.poll !== null) clearInterval(state.poll);
    state.poll = null;
    $("login-error").textContent = "";
    show("login");
  }
  function loadAgents() {
    return fetch("/v1/agents?limit=1000", { headers: authHeaders(), cache: "no-store" }).then(
      function (res) {
        if (res.status === 401) {
          state.token = null;
          sessionStorage.removeItem(KEY);
          if (state.poll !== null) clearInterval(state.poll);
          state.poll = null;
          show("login");
          $("login-error").textContent =
            "Sign-in failed: the server refused the token (401 unauthorized)";
          return false;
        }
        if (!res.ok) {
          return res.text().then(function (text) {
            $("agents-error").textContent = "Listing agents failed: " + res.status + " " + text;
            return false;
          });
        }
        return res.json().then(function (body) {
          state.agents = body.agents || [];
          $("agents-error").textContent = "";
          renderAgents();
          return true;
        });
      },
      function (error) {
        $("login-error").textContent = "Listing agents failed: " + error.message;
        $("agents-error").textContent = "Listing agents failed: " + error.message;
        return false;
      },
    );
  }
  function openList() {
    closeSocket();
    show("agents");
    if (state.poll === null) state.poll = setInterval(loadAgents, 3000);
    loadAgents();
  }
  function usageText(usage) {
    if (!usage) return "";
    let text = (usage.input_tokens || 0) + " in / " + (usage.output_tokens || 0) + " out";
    if (typeof usage.cost === "number") text += " / $" + usage.cost.toFixed(4);
    return text;
  }
  function renderAgents() {
    const filter = $("filter").value.trim().toLowerCase();
    const body = $("agent-rows");
    body.replaceChildren();
    state.agents.forEach(function (agent) {
      const hay = (agent.agent_id + " " + (agent.title || "") + " " + agent.status).toLowerCase();
      if (filter !== "" && hay.indexOf(filter) < 0) return;
      const row = el("tr", "agent-row");
      row.dataset.agentId = agent.agent_id;
      row.appendChild(el("td", "agent-id", agent.agent_id));
      row.appendChild(el("td", "agent-title", agent.title || "(untitled)"));
      row.appendChild(el("td", "status status-" + agent.status, agent.status));
      row.appendChild(el("td", "num", agent.head_seq));
      row.appendChild(el("td", "num", usageText(agent.usage)));
      row.appendChild(el("td", "when", agent.updated_at || ""));
      row.addEventListener("click", function () {
        openAgent(agent.agent_id);
      });
      body.appendChild(row);
    });
    $("agents-empty").hidden = body.children.length > 0;
  }

  function openAgent(agentId) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(agentId)) {
      $("agents-error").textContent = 'Opening an agent failed: invalid agent id "' + agentId + '"';
      return;
    }
    closeSocket();
    state.agentId = agentId;
    state.lastSeq = 0;
    state.streaming = null;
    state.tools = {};
    $("lines").replaceChildren();
    $("approvals").replaceChildren();
    $("actions-log").replaceChildren();
    $("agent-name").textContent = agentId;
    show("transcript");
    state.wanted = true;
    connect();
  }
  function setConn(text, cls) {
    const node = $("conn");
    node.textContent = text;
    node.className = "conn " + cls;
  }
  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const url = scheme + location.host + "/v1/agents/" + state.agentId + "/stream";
    let socket;
    try {
      socket = new WebSocket(url, ["terret.v1", "bearer." + state.token]);
    } catch (error) {
      setConn("connect failed: " + error.message, "bad");
      return;
    }
    state.socket = socket;
    setConn(state.retry > 0 ? "reconnecting" : "connecting", "wait");
    socket.onmessage = function (message) {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch (_) {
        return;
      }
      onFrame(frame);
    };
    socket.onclose = function (close) {
      if (state.socket !== socket) return;
      state.socket = null;
      if (!state.wanted) return;
      state.retry++;
      const delay = Math.min(5000, 250 * Math.pow(2, Math.min(state.retry, 5)));
      setConn(
        "disconnected (" + close.code + (close.reason ? " " + close.reason : "") +
          "), reconnecting from seq " + (state.lastSeq + 1),
        "bad",
      );
      notice(
        "Connection lost (" + close.code + (close.reason ? " " + close.reason : "") +
          "); reconnecting from seq " + (state.lastSeq + 1),
      );
      state.timer = setTimeout(function () {
        state.timer = null;
        if (state.wanted) connect();
      }, delay);
    };
  }
  function closeSocket() {
    state.wanted = false;
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    if (state.socket !== null) {
      const s = state.socket;
      state.socket = null;
      s.close(1000, "console closed");
    }
  }
  function send(frame) {
    if (state.socket === null || state.socket.readyState !== WebSocket.OPEN) {
      logAction("not connected: " + frame.type + " was not sent", "error");
      return;
    }
    state.ref++;
    frame.ref = "c" + state.ref;
    state.socket.send(JSON.stringify(frame));
    logAction(frame.type + " sent (" + frame.ref + ")", "pending", frame.ref);
  }
  function logAction(text, cls, ref) {
    const item = el("li", "action " + cls, text);
    if (ref) item.dataset.ref = ref;
    $("actions-log").prepend(item);
    while ($("actions-log").children.length > 50) $("actions-log").lastChild.remove();
  }
  function settle(ref, text, cls) {
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

  function onFrame(frame) {
    switch (frame.type) {
      case "hello":
        state.retry = 0;
        setConn("live (head seq " + frame.head_seq + ")", "ok");
        state.socket.send(JSON.stringify({ type: "subscribe", from_seq: state.lastSeq + 1 }));
        return;
      case "event": {
        const event = frame.event;
        if (typeof event.seq !== "number" || event.seq <= state.lastSeq) return;
        state.lastSeq = event.seq;
        render(event);
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
        notice(
          "Replay truncated: events from seq " + frame.requested_from_seq + " to " +
            (frame.from_seq - 1) +
            " are not shown (the server replays at most its replay limit)",
        );
        state.lastSeq = frame.from_seq - 1;
        return;
      case "lagged":
        notice(
          "This view fell behind the stream (lagged at seq " + frame.last_seq + "); reconnecting",
        );
        return;
    }
  }

  // One layout per batch of events, not one per event: a replay of thousands renders in one pass.
  function scrollDown() {
    if (state.scrolling) return;
    state.scrolling = true;
    setTimeout(function () {
      state.scrolling = false;
      const box = $("lines");
      box.scrollTop = box.scrollHeight;
      $("seq").textContent = "seq " + state.lastSeq;
    }, 16);
  }
  function line(cls, label, seq) {
    const node = el("div", "line " + cls);
    if (seq !== undefined) node.dataset.seq = String(seq);
    if (label) node.appendChild(el("span", "label", label));
    $("lines").appendChild(node);
    return node;
  }
  function notice(text) {
    line("notice", null).appendChild(el("span", "text", text));
    scrollDown();
  }
  function contentText(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map(function (part) {
        return part.type === "text" ? part.text : "[" + part.type + "]";
      }).join("\n");
    }
    return JSON.stringify(content);
  }
  function pretty(value) {
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value, null, 2);
    } catch (_) {
      return String(value);
    }
  }

  function isEdit(p) {
    const a = p.args;
    if (a === null || typeof a !== "object" || typeof a.file_path !== "string") return false;
    if (p.name === "Edit") {
      return typeof a.old_string === "string" && typeof a.new_string === "string";
    }
    return p.name === "Write" && typeof a.content === "string";
  }
  // Edit and Write as a line diff: the common leading and trailing lines as context, the rest removed and added.
  function diffView(p) {
    const a = p.args;
    const before = p.name === "Edit" ? a.old_string.split("\n") : [];
    const after = (p.name === "Edit" ? a.new_string : a.content).split("\n");
    let head = 0;
    while (head < before.length && head < after.length && before[head] === after[head]) head++;
    let tail = 0;
    while (
      tail < before.length - head && tail < after.length - head &&
      before[before.length - 1 - tail] === after[after.length - 1 - tail]
    ) tail++;
    const view = el("div", "diff");
    view.appendChild(
      el("div", "diff-file", a.file_path + (a.replace_all ? " (every occurrence)" : "")),
    );
    const row = function (cls, mark, text) {
      view.appendChild(el("div", cls, mark + text));
    };
    before.slice(0, head).forEach(function (text) {
      row("ctx", "  ", text);
    });
    before.slice(head, before.length - tail).forEach(function (text) {
      row("del", "- ", text);
    });
    after.slice(head, after.length - tail).forEach(function (text) {
      row("add", "+ ", text);
    });
    after.slice(after.length - tail).forEach(function (text) {
      row("ctx", "  ", text);
    });
    return view;
  }

  function render(event) {
    const p = event.payload || {};
    let node;
    switch (event.type) {
      case "user/message":
        line("user", "user", event.seq).appendChild(el("div", "text", contentText(p.content)));
        break;
      case "context/injected":
        line("steer", "steer", event.seq).appendChild(el("div", "text", contentText(p.content)));
        break;
      case "assistant/chunk":
        if (state.streaming === null) {
          node = line("assistant streaming", "assistant", event.seq);
          state.streaming = el("div", "text", "");
          node.appendChild(state.streaming);
        }
        state.streaming.textContent += p.text || "";
        break;
      case "assistant/message": {
        const parts = p.parts || [];
        const texts = parts.filter(function (x) {
          return x.type === "text";
        }).map(function (x) {
          return x.text;
        });
        const thinking = parts.filter(function (x) {
          return x.type === "thinking" || x.type === "reasoning";
        });
        if (thinking.length > 0) {
          const details = el("details", "thinking");
          details.appendChild(el("summary", null, "thinking"));
          details.appendChild(el(
            "pre",
            null,
            thinking.map(function (x) {
              return x.text || "";
            }).join("\n"),
          ));
          line("thinking-line", null, event.seq).appendChild(details);
        }
        if (state.streaming !== null) {
          state.streaming.textContent = texts.join("");
          state.streaming.parentNode.classList.remove("streaming");
          state.streaming = null;
        } else if (texts.length > 0) {
          line("assistant", "assistant", event.seq).appendChild(el("div", "text", texts.join("")));
        }
        break;
      }
      case "tool/call":
        node = line("tool", "tool " + p.name, event.seq);
        if (isEdit(p)) node.appendChild(diffView(p));
        else node.appendChild(el("pre", "args", pretty(p.args)));
        state.tools[p.id] = node;
        break;
      case "tool/result": {
        const host = state.tools[p.id] || line("tool", "tool " + p.name, event.seq);
        const result = el("details", p.is_error ? "result error" : "result");
        result.appendChild(el("summary", null, p.is_error ? "error result" : "result"));
        result.appendChild(el("pre", null, contentText(p.content)));
        host.appendChild(result);
        break;
      }
      case "turn/start":
        line("boundary", "turn started", event.seq);
        break;
      case "turn/end":
        state.streaming = null;
        node = line(
          "boundary turn-end status-" + p.status,
          "turn " + (p.status || "ended"),
          event.seq,
        );
        if (p.error) node.appendChild(el("span", "text error", pretty(p.error)));
        break;
      case "step/end":
        state.streaming = null;
        line(
          "step",
          "step: " + usageText(p.usage) + (p.finish_reason ? " (" + p.finish_reason + ")" : ""),
          event.seq,
        );
        break;
      case "approval/requested":
        line("approval", "approval requested: " + (p.call ? p.call.name : ""), event.seq)
          .appendChild(el("pre", "args", pretty(p.call ? p.call.args : p)));
        pinApproval(p);
        break;
      case "approval/resolved": {
        line(
          "approval",
          "approval " + p.decision + (p.rule ? " (remembered " + p.rule + ")" : ""),
          event.seq,
        );
        const pinned = $("approvals").querySelector(
          '[data-request-id="' + CSS.escape(String(p.request_id)) + '"]',
        );
        if (pinned !== null) pinned.remove();
        break;
      }
      case "input/queued":
      case "step/start":
        break;
      default:
        if (event.type.indexOf("error") >= 0 || event.type.indexOf("failed") >= 0) {
          line("error", event.type, event.seq).appendChild(el("pre", null, pretty(p)));
        } else {
          line("meta", event.type, event.seq);
        }
    }
    scrollDown();
  }

  function pinApproval(p) {
    const card = el("div", "approval-card");
    card.dataset.requestId = String(p.request_id);
    card.appendChild(el("strong", null, "Approve " + (p.call ? p.call.name : "a call") + "?"));
    if (p.reason) card.appendChild(el("span", "reason", " " + p.reason));
    card.appendChild(el("pre", "args", pretty(p.call ? p.call.args : p)));
    const remember = el("input");
    remember.type = "checkbox";
    remember.className = "remember";
    const label = el("label", null, "");
    label.appendChild(remember);
    label.appendChild(document.createTextNode(" remember for this session"));
    const answer = function (decision) {
      send({
        type: "approve",
        request_id: p.request_id,
        decision: decision,
        remember: remember.checked,
      });
    };
    const allow = el("button", "allow", "Allow");
    allow.type = "button";
    allow.addEventListener("click", function () {
      answer("allow");
    });
    const deny = el("button", "deny", "Deny");
    deny.type = "button";
    deny.addEventListener("click", function () {
      answer("deny");
    });
    card.appendChild(allow);
    card.appendChild(deny);
    card.appendChild(label);
    $("approvals").appendChild(card);
  }

  function sendMessage(event) {
    event.preventDefault();
    const text = $("message").value;
    if (text.trim() === "") return;
    send({ type: "message", content: text });
    $("message").value = "";
  }

  document.addEventListener("DOMContentLoaded", function () {
    $("login-form").addEventListener("submit", login);
    $("logout").addEventListener("click", logout);
    $("filter").addEventListener("input", renderAgents);
    $("open-form").addEventListener("submit", function (event) {
      event.preventDefault();
      openAgent($("open-id").value.trim());
    });
    $("back").addEventListener("click", openList);
    $("send-form").addEventListener("submit", sendMessage);
    $("steer-form").addEventListener("submit", function (event) {
      event.preventDefault();
      const text = $("steer").value;
      if (text.trim() === "") return;
      send({ type: "steer", content: text, wake: $("steer-wake").checked });
      $("steer").value = "";
    });
    $("policy-form").addEventListener("submit", function (event) {
      event.preventDefault();
      const allow = $("policy").value.split(",").map(function (x) {
        return x.trim();
      }).filter(function (x) {
        return x !== "";
      });
      send({ type: "set_policy", allow: allow });
    });
    $("cancel").addEventListener("click", function () {
      send({ type: "cancel", reason: "cancelled from the console" });
    });
    if (state.token) openList();
    else show("login");
  });
})();
