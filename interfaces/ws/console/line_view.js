// One transcript line's DOM, built from its model item (see transcript.js): messages, tool calls with their
// results (Edit and Write as a line diff), turn and step boundaries, approvals, errors and notices.
import { el } from "./dom.js";
import { pretty } from "./format.js";

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
function collapsible(item, key, cls, summary, text, onToggle) {
  const details = el("details", cls);
  details.appendChild(el("summary", null, summary));
  details.appendChild(el("pre", null, text));
  if (item[key]) details.open = true;
  details.addEventListener("toggle", function () {
    item[key] = details.open;
    onToggle();
  });
  return details;
}

/**
 * Builds the DOM of one model line; every text from the model or a tool goes through textContent. `onToggle` runs
 * when a collapsible part is opened or closed (its height changed).
 */
export function buildLine(item, onToggle) {
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
      node.appendChild(collapsible(item, "open", "thinking", "thinking", item.text, onToggle));
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
          onToggle,
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
