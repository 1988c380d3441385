// How the console spells the values it shows: usage, message content, and any other JSON.

/** A step's or an agent's usage: tokens in and out, and the cost when the provider reported one. */
export function usageText(usage) {
  if (!usage) return "";
  let text = (usage.input_tokens || 0) + " in / " + (usage.output_tokens || 0) + " out";
  if (typeof usage.cost === "number") text += " / $" + usage.cost.toFixed(4);
  return text;
}

/** A message's content: a string as it is, text parts joined, other parts named. */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map(function (part) {
      return part.type === "text" ? part.text : "[" + part.type + "]";
    }).join("\n");
  }
  return JSON.stringify(content);
}

/** A value as indented JSON (a string as it is). */
export function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch (_) {
    return String(value);
  }
}
