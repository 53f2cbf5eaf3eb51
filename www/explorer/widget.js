// The Jupyter widget's front end, on anywidget's contract: an ES module whose `render({ model,
// el })` draws the widget in `el` and returns a cleanup function. It puts one
// `<diffattn-explorer>` in `el` and keeps it and the model's traits in step: the traits carry the
// element's attribute names (`text`, `mechanism`, `shift`, `heads`, ..., `gate`, `maps`,
// `controls`), plus `spec` (a stages spec as a dict, drawn in place of the sentence). A trait
// the Python class does not define is undefined here and left alone; None leaves the element
// at what it shows.

import { ATTRIBUTES, formatGate } from './attributes.js';
import { KEYS } from './settings.generated.js';
import { STATE_KEYS } from './state.js';

/** anywidget's `render` for the element registered as `tagName`. */
export function renderWidget({ model, el }, tagName = 'diffattn-explorer') {
  const element = document.createElement(tagName);
  // The attributes the schema makes traits (not `src`: a URL means nothing to a notebook kernel).
  const synced = ATTRIBUTES.filter((name) => KEYS[name].widget && model.get(name) !== undefined);
  const fromModel = (name) => {
    const value = model.get(name);
    if (value === null || value === undefined) return;
    if (name in STATE_KEYS && element.state[name] === value) return;
    element[name] = value;
  };
  for (const name of synced) fromModel(name);
  const listeners = synced.map((name) => [`change:${name}`, () => fromModel(name)]);
  const fromSpec = async () => {
    const spec = model.get('spec');
    if (spec && typeof spec === 'object' && Object.keys(spec).length) await element.loadSpec(spec, 'spec');
    else if (spec !== undefined) await element.loadSpec(null);
  };
  listeners.push(['change:spec', fromSpec]);
  for (const [event, fn] of listeners) model.on(event, fn);
  // A person moved a control: every synced trait that differs takes the element's value.
  const onChange = (event) => {
    const state = event.detail;
    let changed = false;
    for (const name of synced) {
      const value = name in STATE_KEYS ? state[name] : name === 'gate' ? formatGate(state) : undefined;
      if (value === undefined || model.get(name) === value) continue;
      model.set(name, value);
      changed = true;
    }
    if (changed) model.save_changes();
  };
  element.addEventListener('change', onChange);
  el.append(element);
  // A spec brings its own settings (its heads, its λ): traits Python set before the widget was
  // drawn (`w.head = 2` in the next cell of a notebook run whole) apply once it is loaded.
  if (model.get('spec')) fromSpec().then(() => synced.forEach(fromModel));
  return () => {
    for (const [event, fn] of listeners) model.off(event, fn);
    element.removeEventListener('change', onChange);
    element.remove();
  };
}
