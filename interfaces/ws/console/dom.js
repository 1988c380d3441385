// The DOM helpers every module of the console uses.

/** The element with this id. */
export function $(id) {
  return document.getElementById(id);
}

/** A new element with a class and a text (set as textContent: never parsed as HTML). */
export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** Shows one of the page's three views and hides the others. */
export function show(view) {
  ["login", "agents", "transcript"].forEach(function (name) {
    $(name).hidden = name !== view;
  });
}
