// The agents list (GET /v1/agents, read again every POLL_MS while shown) and the open agent's live row.
import { $, el } from "./dom.js";
import { usageText } from "./format.js";

/** How often the agents list is read again while it is shown (no push of agent changes exists in protocol v1). */
const POLL_MS = 3000;

const STATUS = {
  "turn/start": "running",
  "turn/end": "idle",
  "approval/requested": "waiting_approval",
  "approval/resolved": "running",
};

/**
 * The agents the token may see, in #agent-rows. `hooks.token()` is the token to list with; `hooks.unauthorized()`
 * runs when the server refuses it (401); `hooks.open(agentId)` when a row is clicked; `hooks.changed()` when the
 * open agent's live row changed (it is shown by the next paint, not once per event of a replay).
 */
export class AgentsList {
  #hooks;
  #agents = [];
  #poll = null;
  /** The open agent's row, kept live from its events (null while no agent is open or before its hello). */
  #live = null;
  #liveDirty = false;

  constructor(hooks) {
    this.#hooks = hooks;
  }

  /** Reads the list; resolves true once it is shown, false when it failed (the reason is on the page). */
  load() {
    const headers = { authorization: "Bearer " + this.#hooks.token() };
    return fetch("/v1/agents?limit=1000", { headers: headers, cache: "no-store" }).then(
      (res) => {
        if (res.status === 401) {
          this.stopPolling();
          this.#hooks.unauthorized();
          return false;
        }
        if (!res.ok) {
          return res.text().then(function (text) {
            $("agents-error").textContent = "Listing agents failed: " + res.status + " " + text;
            return false;
          });
        }
        return res.json().then((body) => {
          this.#agents = body.agents || [];
          if (this.#live !== null) this.#keepLive();
          $("agents-error").textContent = "";
          this.render();
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

  /** Shows the list now and reads it again every POLL_MS until `stopPolling`. */
  startPolling() {
    this.render();
    if (this.#poll === null) this.#poll = setInterval(() => this.load(), POLL_MS);
    this.load();
  }

  stopPolling() {
    if (this.#poll !== null) clearInterval(this.#poll);
    this.#poll = null;
  }

  /** Renders the rows that match the filter. */
  render() {
    const filter = $("filter").value.trim().toLowerCase();
    const body = $("agent-rows");
    body.replaceChildren();
    this.#agents.forEach((agent) => {
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
      row.addEventListener("click", () => {
        this.#hooks.open(agent.agent_id);
      });
      body.appendChild(row);
    });
    $("agents-empty").hidden = body.children.length > 0;
  }

  /** Forgets the live row (another agent is opened). */
  closeLive() {
    this.#live = null;
    $("agent-status").textContent = "";
  }

  // The open agent's row is kept live from the events this page already receives: status from turn and approval
  // boundaries, head seq and last activity from every event, usage from each step, the title from session/titled.
  // The list shares the record, so going back to it shows the same figures before its next poll.
  /** Starts keeping `agentId`'s row live, once its hello names the head (a no-op when it already is). */
  openLive(agentId, headSeq) {
    if (this.#live !== null) return;
    let row = null;
    for (let i = 0; i < this.#agents.length; i++) {
      if (this.#agents[i].agent_id === agentId) row = this.#agents[i];
    }
    if (row === null) {
      row = {
        agent_id: agentId,
        title: null,
        status: "idle",
        head_seq: headSeq,
        usage: { input_tokens: 0, output_tokens: 0 },
        updated_at: "",
        counted: 0,
      };
      this.#agents.push(row);
    } else {
      // The listed usage sums the steps up to the listed head; the steps after it are added here.
      row.counted = row.head_seq;
    }
    row.usage = Object.assign({ input_tokens: 0, output_tokens: 0 }, row.usage || {});
    this.#showLive(row);
    this.#live = row;
  }

  /** Folds one of the open agent's events into its live row. */
  follow(event) {
    const row = this.#live;
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
    this.#liveDirty = true;
    this.#hooks.changed();
  }

  /** Shows the live row if it changed since last shown (called by each paint). */
  paintLive() {
    if (this.#liveDirty && this.#live !== null) this.#showLive(this.#live);
    this.#liveDirty = false;
  }

  /** Puts the open agent's live record back into a freshly polled list (the poll may lag the stream). */
  #keepLive() {
    const live = this.#live;
    for (let i = 0; i < this.#agents.length; i++) {
      if (this.#agents[i].agent_id === live.agent_id) {
        if (this.#agents[i].head_seq > live.head_seq) return;
        this.#agents[i] = live;
        return;
      }
    }
    this.#agents.push(live);
  }

  #showLive(row) {
    const node = $("agent-status");
    node.className = "agent-status status-" + row.status;
    node.textContent = row.status + " / head seq " + row.head_seq + " / " + usageText(row.usage) +
      (row.updated_at ? " / last activity " + row.updated_at : "");
  }
}
