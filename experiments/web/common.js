// What both pages of `pipslab serve` use: element lookup and building, the JSON API call
// (a non-2xx answer's one-line "error" becomes the thrown message), the error line.
"use strict";

const $ = (id) => document.getElementById(id);

function html(tag, attrs, parent, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

async function api(method, path, body) {
  const res = await fetch(path, {method, headers: {"Content-Type": "application/json"},
                                 body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}
