// What each session event shows in the transcript (see transcript.js for the lines themselves): messages, streamed
// text, tool calls and their results, boundaries, approvals (with a card to answer them) and errors.
import { $, el } from "./dom.js";
import { contentText, pretty, usageText } from "./format.js";

/** Turns a session's events into transcript lines. `send` sends a frame on the socket (an approval's answer). */
export class EventView {
  #lines;
  #send;
  /** The assistant line streamed chunks go to, until its message or the step's end. */
  #streaming = null;
  /** The tool lines waiting for their results, by call id. */
  #tools = {};

  constructor(lines, send) {
    this.#lines = lines;
    this.#send = send;
  }

  /** Forgets the open agent's streaming line and pending calls (another agent is opened). */
  reset() {
    this.#streaming = null;
    this.#tools = {};
  }

  /** Adds (or updates) the lines one event shows. */
  render(event) {
    const p = event.payload || {};
    const seq = event.seq;
    switch (event.type) {
      case "user/message":
        this.#lines.add({ k: "user", seq: seq, text: contentText(p.content) });
        break;
      case "context/injected":
        this.#lines.add({ k: "steer", seq: seq, text: contentText(p.content) });
        break;
      case "assistant/chunk":
        if (this.#streaming === null) {
          this.#streaming = this.#lines.add({
            k: "assistant",
            seq: seq,
            text: "",
            streaming: true,
          });
        }
        this.#streaming.text += p.text || "";
        this.#lines.touch(this.#streaming);
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
          this.#lines.add({
            k: "thinking",
            seq: seq,
            open: false,
            text: thinking.map(function (x) {
              return x.text || "";
            }).join("\n"),
          });
        }
        if (this.#streaming !== null) {
          this.#streaming.text = texts.join("");
          this.#streaming.streaming = false;
          this.#lines.touch(this.#streaming);
          this.#streaming = null;
        } else if (texts.length > 0) {
          this.#lines.add({ k: "assistant", seq: seq, text: texts.join(""), streaming: false });
        }
        break;
      }
      case "tool/call":
        this.#tools[p.id] = this.#lines.add({
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
        let host = this.#tools[p.id];
        if (host === undefined) {
          host = this.#lines.add({ k: "tool", seq: seq, name: p.name, args: null, open: false });
        }
        delete this.#tools[p.id];
        host.result = contentText(p.content);
        host.error = p.is_error === true;
        this.#lines.touch(host);
        break;
      }
      case "turn/start":
        this.#lines.add({ k: "turn-start", seq: seq });
        break;
      case "turn/end":
        this.#streaming = null;
        this.#lines.add({
          k: "turn-end",
          seq: seq,
          status: p.status,
          error: p.error ? pretty(p.error) : undefined,
        });
        break;
      case "step/end":
        this.#streaming = null;
        this.#lines.add({
          k: "step",
          seq: seq,
          text: "step: " + usageText(p.usage) +
            (p.finish_reason ? " (" + p.finish_reason + ")" : ""),
        });
        break;
      case "approval/requested":
        this.#lines.add({
          k: "approval",
          seq: seq,
          text: "approval requested: " + (p.call ? p.call.name : ""),
          args: pretty(p.call ? p.call.args : p),
        });
        $("approvals").appendChild(approvalCard(p, this.#send));
        break;
      case "approval/resolved": {
        this.#lines.add({
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
          this.#lines.add({ k: "error", seq: seq, type: event.type, text: pretty(p) });
        } else {
          this.#lines.add({ k: "meta", seq: seq, type: event.type });
        }
    }
  }
}

/** The card asking for a decision on a pending approval; its buttons answer it with `send`. */
function approvalCard(p, send) {
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
  return card;
}
