"use strict";
(function () {
  const KEY = "terret.console.token";
  /** How often the agents list is read again while it is shown (no push of agent changes exists in protocol v1). */
  const POLL_MS = 3000;
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
    live: null,
    liveDirty: false,
    items: [],
    heights: [],
    nodes: new Map(),
    follow: true,
    autoTop: -1,
    painting: false,
    paintTimer: null,
    replayTo: 0,
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
          if (state.live !== null) keepLive();
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
    renderAgents();
    if (state.poll === null) state.poll = setInterval(loadAgents, POLL_MS);
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

  // The open agent's row is kept live from the events this page already receives: status from turn and approval
  // boundaries, head seq and last activity from every event, usage from each step, the title from session/titled.
  // The list shares the record, so going back to it shows the same figures before its next poll.
  function liveRow(headSeq) {
    let row = null;
    for (let i = 0; i < state.agents.length; i++) {
      if (state.agents[i].agent_id === state.agentId) row = state.agents[i];
    }
    if (row === null) {
      row = {
        agent_id: state.agentId,
        title: null,
        status: "idle",
        head_seq: headSeq,
        usage: { input_tokens: 0, output_tokens: 0 },
        updated_at: "",
        counted: 0,
      };
      state.agents.push(row);
    } else {
      // The listed usage sums the steps up to the listed head; the steps after it are added here.
      row.counted = row.head_seq;
    }
    row.usage = Object.assign({ input_tokens: 0, output_tokens: 0 }, row.usage || {});
    showLive(row);
    return row;
  }
  const STATUS = {
    "turn/start": "running",
    "turn/end": "idle",
    "approval/requested": "waiting_approval",
    "approval/resolved": "running",
  };
  function follow(event) {
    const row = state.live;
    if (row === null) return;
    if (event.seq > row.head_seq) row.head_seq = event.seq;
    row.updated_at = event.at;
    const p = event.payload || {};
    if (STATUS[event.type] !== undefined) row.status = STATUS[event.type];
    if (event.type === "turn/end" && p.status === "failed") row.status = "failed";
    if (event.type === "session/titled" && typeof p.title === "string") row.title = p.title;
    if (event.type === "step/end" && p.usage && event.seq > row.counted) {
      row.usage.input_tokens += p.usage.input_tokens || 0;
      row.usage.output_tokens += p.usage.output_tokens || 0;
      if (typeof p.usage.cost === "number") row.usage.cost = (row.usage.cost || 0) + p.usage.cost;
      row.counted = event.seq;
    }
    state.liveDirty = true; // shown by the next paint, not once per event of a replay
    schedule();
  }
  /** Puts the open agent's live record back into a freshly polled list (the poll may lag the stream). */
  function keepLive() {
    const live = state.live;
    for (let i = 0; i < state.agents.length; i++) {
      if (state.agents[i].agent_id === live.agent_id) {
        if (state.agents[i].head_seq > live.head_seq) return;
        state.agents[i] = live;
        return;
      }
    }
    state.agents.push(live);
  }
  function showLive(row) {
    const node = $("agent-status");
    node.className = "agent-status status-" + row.status;
    node.textContent = row.status + " / head seq " + row.head_seq + " / " + usageText(row.usage) +
      (row.updated_at ? " / last activity " + row.updated_at : "");
  }

  function openAgent(agentId) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(agentId)) {
      $("agents-error").textContent = 'Opening an agent failed: invalid agent id "' + agentId + '"';
      return;
    }
    closeSocket();
    if (state.poll !== null) clearInterval(state.poll);
    state.poll = null;
    state.agentId = agentId;
    state.lastSeq = 0;
    state.streaming = null;
    state.tools = {};
    resetLines();
    $("banner").hidden = true;
    $("banner").replaceChildren();
    state.live = null;
    $("agent-status").textContent = "";
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
        state.replayTo = frame.head_seq;
        if (state.retry > 0) notice("Reconnected; resuming from seq " + (state.lastSeq + 1));
        state.retry = 0;
        if (state.live === null) state.live = liveRow(frame.head_seq);
        setConn("live", "ok");
        state.socket.send(JSON.stringify({ type: "subscribe", from_seq: state.lastSeq + 1 }));
        return;
      case "event": {
        const event = frame.event;
        if (typeof event.seq !== "number" || event.seq <= state.lastSeq) return;
        state.lastSeq = event.seq;
        render(event);
        follow(event);
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

  // The transcript is virtualized: every line lives in `state.items` (a compact model: kind, seq, the text it shows),
  // and only the lines in view plus OVERSCAN on each side are in the DOM, between two spacers whose heights stand
  // for the lines above and below (measured once rendered, estimated before). One paint per animation frame.
  const OVERSCAN = 60;
  const ESTIMATE = 26;
  function resetLines() {
    state.items = [];
    state.heights = [];
    state.nodes = new Map();
    state.follow = true;
    $("rows").replaceChildren();
    $("above").style.height = "0px";
    $("below").style.height = "0px";
  }
  // While a replay is still short of the head the server named in hello, paint at most every REPLAY_PAINT_MS (the
  // seq counter shows progress); the event that reaches the head, and every live one, paints on the next frame.
  const REPLAY_PAINT_MS = 200;
  function schedule() {
    const replaying = state.lastSeq < state.replayTo;
    if (state.painting) {
      if (replaying || state.paintTimer === null) return;
      clearTimeout(state.paintTimer);
    }
    state.painting = true;
    state.paintTimer = null;
    if (replaying) {
      state.paintTimer = setTimeout(function () {
        state.paintTimer = null;
        requestAnimationFrame(paint);
      }, REPLAY_PAINT_MS);
    } else requestAnimationFrame(paint);
  }
  function heightOf(i) {
    const h = state.heights[i];
    return h === undefined ? ESTIMATE : h;
  }
  function paint() {
    state.painting = false;
    const box = $("lines");
    const items = state.items;
    const n = items.length;
    const view = box.clientHeight || 400;
    let total = 0;
    for (let i = 0; i < n; i++) total += heightOf(i);
    const top = state.follow ? Math.max(0, total - view) : box.scrollTop;
    let first = 0;
    let acc = 0;
    while (first < n && acc + heightOf(first) <= top) acc += heightOf(first++);
    let last = first;
    let bottom = acc;
    while (last < n && bottom < top + view) bottom += heightOf(last++);
    const start = Math.max(0, first - OVERSCAN);
    const end = Math.min(n, last + OVERSCAN);
    let above = 0;
    for (let i = 0; i < start; i++) above += heightOf(i);
    const nodes = [];
    const kept = new Map();
    for (let i = start; i < end; i++) {
      const item = items[i];
      let cached = state.nodes.get(item);
      if (cached === undefined || cached.v !== item.v) cached = { v: item.v, node: build(item) };
      kept.set(item, cached);
      nodes.push(cached.node);
    }
    state.nodes = kept;
    const rows = $("rows");
    let same = rows.children.length === nodes.length;
    for (let i = 0; same && i < nodes.length; i++) same = rows.children[i] === nodes[i];
    if (!same) rows.replaceChildren.apply(rows, nodes);
    for (let i = 0; i < nodes.length; i++) state.heights[start + i] = nodes[i].offsetHeight;
    let below = 0;
    for (let i = end; i < n; i++) below += heightOf(i);
    $("above").style.height = above + "px";
    $("below").style.height = below + "px";
    if (state.follow) {
      box.scrollTop = box.scrollHeight;
      state.autoTop = box.scrollTop;
    }
    $("seq").textContent = "seq " + state.lastSeq;
    if (state.liveDirty && state.live !== null) showLive(state.live);
    state.liveDirty = false;
  }
  function onScroll() {
    const box = $("lines");
    if (Math.abs(box.scrollTop - state.autoTop) < 1) return; // the paint's own scroll to the bottom
    state.follow = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
    schedule();
  }
  function add(item) {
    item.v = 0;
    state.items.push(item);
    schedule();
    return item;
  }
  function touch(item) {
    item.v++;
    schedule();
  }
  // A line in the transcript, and the same text in the banner above it (the last three), which stays in view when
  // the line does not.
  function notice(text) {
    add({ k: "notice", text: text });
    const banner = $("banner");
    banner.appendChild(el("li", null, text));
    while (banner.children.length > 3) banner.firstChild.remove();
    banner.hidden = false;
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

  function isEdit(name, a) {
    if (a === null || typeof a !== "object" || typeof a.file_path !== "string") return false;
    if (name === "Edit") {
      return typeof a.old_string === "string" && typeof a.new_string === "string";
    }
    return name === "Write" && typeof a.content === "string";
  }
  // Edit and Write as a line diff: the common leading and trailing lines as context, the rest removed and added.
  function diffView(name, a) {
    const before = name === "Edit" ? a.old_string.split("\n") : [];
    const after = (name === "Edit" ? a.new_string : a.content).split("\n");
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

  // A <details> whose open state lives in the model, so it survives the line leaving the DOM and coming back.
  function collapsible(item, key, cls, summary, text) {
    const details = el("details", cls);
    details.appendChild(el("summary", null, summary));
    details.appendChild(el("pre", null, text));
    if (item[key]) details.open = true;
    details.addEventListener("toggle", function () {
      item[key] = details.open;
      schedule();
    });
    return details;
  }

  /** Builds the DOM of one model line; every text from the model or a tool goes through textContent. */
  function build(item) {
    const line = function (cls, label) {
      const node = el("div", "line " + cls);
      if (item.seq !== undefined) node.dataset.seq = String(item.seq);
      if (label) node.appendChild(el("span", "label", label));
      return node;
    };
    let node;
    switch (item.k) {
      case "user":
      case "steer":
        node = line(item.k, item.k);
        node.appendChild(el("div", "text", item.text));
        return node;
      case "assistant":
        node = line(item.streaming ? "assistant streaming" : "assistant", "assistant");
        node.appendChild(el("div", "text", item.text));
        return node;
      case "thinking":
        node = line("thinking-line", null);
        node.appendChild(collapsible(item, "open", "thinking", "thinking", item.text));
        return node;
      case "tool":
        node = line("tool", "tool " + item.name);
        if (isEdit(item.name, item.args)) node.appendChild(diffView(item.name, item.args));
        else node.appendChild(el("pre", "args", pretty(item.args)));
        if (item.result !== null) {
          node.appendChild(collapsible(
            item,
            "open",
            item.error ? "result error" : "result",
            item.error ? "error result" : "result",
            item.result,
          ));
        }
        return node;
      case "turn-start":
        return line("boundary", "turn started");
      case "turn-end":
        node = line("boundary turn-end status-" + item.status, "turn " + (item.status || "ended"));
        if (item.error !== undefined) node.appendChild(el("span", "text error", item.error));
        return node;
      case "step":
        return line("step", item.text);
      case "approval":
        node = line("approval", item.text);
        if (item.args !== undefined) node.appendChild(el("pre", "args", item.args));
        return node;
      case "error":
        node = line("error", item.type);
        node.appendChild(el("pre", null, item.text));
        return node;
      case "notice":
        node = line("notice", null);
        node.appendChild(el("span", "text", item.text));
        return node;
      default:
        return line("meta", item.type);
    }
  }

  function render(event) {
    const p = event.payload || {};
    const seq = event.seq;
    switch (event.type) {
      case "user/message":
        add({ k: "user", seq: seq, text: contentText(p.content) });
        break;
      case "context/injected":
        add({ k: "steer", seq: seq, text: contentText(p.content) });
        break;
      case "assistant/chunk":
        if (state.streaming === null) {
          state.streaming = add({ k: "assistant", seq: seq, text: "", streaming: true });
        }
        state.streaming.text += p.text || "";
        touch(state.streaming);
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
          add({
            k: "thinking",
            seq: seq,
            open: false,
            text: thinking.map(function (x) {
              return x.text || "";
            }).join("\n"),
          });
        }
        if (state.streaming !== null) {
          state.streaming.text = texts.join("");
          state.streaming.streaming = false;
          touch(state.streaming);
          state.streaming = null;
        } else if (texts.length > 0) {
          add({ k: "assistant", seq: seq, text: texts.join(""), streaming: false });
        }
        break;
      }
      case "tool/call":
        state.tools[p.id] = add({
          k: "tool",
          seq: seq,
          name: p.name,
          args: p.args,
          result: null,
          error: false,
          open: false,
        });
        break;
      case "tool/result": {
        let host = state.tools[p.id];
        if (host === undefined) {
          host = add({ k: "tool", seq: seq, name: p.name, args: null, open: false });
        }
        delete state.tools[p.id];
        host.result = contentText(p.content);
        host.error = p.is_error === true;
        touch(host);
        break;
      }
      case "turn/start":
        add({ k: "turn-start", seq: seq });
        break;
      case "turn/end":
        state.streaming = null;
        add({
          k: "turn-end",
          seq: seq,
          status: p.status,
          error: p.error ? pretty(p.error) : undefined,
        });
        break;
      case "step/end":
        state.streaming = null;
        add({
          k: "step",
          seq: seq,
          text: "step: " + usageText(p.usage) +
            (p.finish_reason ? " (" + p.finish_reason + ")" : ""),
        });
        break;
      case "approval/requested":
        add({
          k: "approval",
          seq: seq,
          text: "approval requested: " + (p.call ? p.call.name : ""),
          args: pretty(p.call ? p.call.args : p),
        });
        pinApproval(p);
        break;
      case "approval/resolved": {
        add({
          k: "approval",
          seq: seq,
          text: "approval " + p.decision + (p.rule ? " (remembered " + p.rule + ")" : ""),
        });
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
          add({ k: "error", seq: seq, type: event.type, text: pretty(p) });
        } else {
          add({ k: "meta", seq: seq, type: event.type });
        }
    }
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
    $("lines").addEventListener("scroll", onScroll, { passive: true });
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
