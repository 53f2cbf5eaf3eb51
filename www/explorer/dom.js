// Small DOM helpers shared by the explorer's modules. User text only ever reaches the DOM
// through `textContent` (never HTML), and no element gets an inline `style` attribute, so the
// explorer runs under a strict Content-Security-Policy.

import { visibleToken } from './format.js';

/** A new element with an optional class and text. */
export function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A token as a bidi-isolated span whose invisible characters are made visible. */
export function tokenNode(token) {
  const bdi = make('bdi', 'token');
  bdi.textContent = visibleToken(token);
  return bdi;
}

/**
 * Replaces a `<select>`'s options with `[{ value, label }]` (or `{ group, label: [...] }` for an
 * optgroup), keeping the selected value when it is still offered.
 */
export function setOptions(select, options) {
  // The same options again (every render syncs the controls): nothing to rebuild, so the
  // browser restyles nothing.
  const flat = options.flatMap((o) => (o.group ? [`[${o.group}]`, ...o.label.map((x) => `${x.value}=${x.label}`)] : [`${o.value}=${o.label}`]));
  const now = [...select.children].flatMap((c) => (c.localName === 'optgroup' ? [`[${c.label}]`, ...[...c.children].map((x) => `${x.value}=${x.textContent}`)] : [`${c.value}=${c.textContent}`]));
  if (flat.length === now.length && flat.every((f, i) => f === now[i])) return;
  const current = select.value;
  select.replaceChildren(
    ...options.map(({ value, label, group }) => {
      if (group) {
        const optgroup = make('optgroup');
        optgroup.label = group;
        optgroup.append(...label.map((o) => Object.assign(make('option', '', o.label), { value: o.value })));
        return optgroup;
      }
      return Object.assign(make('option', '', label), { value });
    }),
  );
  if ([...select.options].some((o) => o.value === current)) select.value = current;
}

/** Every element with an `id` under `root`, as `{ camelCaseId: element }`. */
export function byId(root) {
  const out = {};
  for (const node of root.querySelectorAll('[id]')) {
    out[node.id.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = node;
  }
  return out;
}

/** Sets `el`'s text to `text` unless it already is: an unchanged text is no change to the
 * page, so a slider's tick does not make the browser lay the page out again for it. */
export function setText(el, text) {
  const s = String(text);
  if (el.textContent !== s) el.textContent = s;
}

/** Sets attribute `name` of `el` to `value` unless it already is (see `setText`). */
export function setAttr(el, name, value) {
  const s = String(value);
  if (el.getAttribute(name) !== s) el.setAttribute(name, s);
}

/** Sets `el`'s title to `value` unless it already is (see `setText`). */
export function setTitle(el, value) {
  if (el.title !== value) el.title = value;
}

/** Disables or enables `el` unless it already is (see `setHidden`). */
export function setDisabled(el, disabled) {
  const d = !!disabled;
  if (el.disabled !== d) el.disabled = d;
}

/** Hides or shows `el` unless it already is (see `setText`): a write of the same value still
 * invalidates the element's style. */
export function setHidden(el, hidden) {
  const h = !!hidden;
  if (el.hidden !== h) el.hidden = h;
}
