// One visible, dismissable area (role="alert") for every error of one explorer.
//
// Messages have keys, so the same problem shows once and a later success can clear it
// (`clear('spec')` after a good spec file); `clearTransient()` drops the messages about the
// previous input when a new one arrives. User text only ever reaches the DOM as text.

import { make } from './dom.js';

/** Message keys that describe one input and go away with the next one. */
const TRANSIENT = Object.freeze(['engine', 'spec', 'settings']);

export class Messages {
  #box;
  #t;

  /** `box` is the alert element; `t(key, params)` translates. */
  constructor(box, t) {
    this.#box = box;
    this.#t = t;
  }

  /** Shows (or replaces) the message `key`, with an optional `{ label, run }` action button. */
  show(key, text, { action } = {}) {
    let item = this.#box.querySelector(`[data-key="${key}"]`);
    if (!item) {
      item = make('div', 'message');
      item.dataset.key = key;
      item.setAttribute('part', 'message');
      const buttons = make('div', 'message-buttons');
      const dismiss = make('button', 'button', '×');
      dismiss.type = 'button';
      dismiss.dataset.role = 'dismiss';
      dismiss.addEventListener('click', () => item.remove());
      buttons.append(dismiss);
      item.append(make('p'), buttons);
      this.#box.append(item);
    }
    item.querySelector('p').textContent = text;
    const dismiss = item.querySelector('[data-role="dismiss"]');
    dismiss.setAttribute('aria-label', this.#t('dismiss'));
    dismiss.title = this.#t('dismiss');
    item.querySelector('[data-role="action"]')?.remove();
    if (action) {
      const button = make('button', 'button', action.label);
      button.type = 'button';
      button.dataset.role = 'action';
      button.addEventListener('click', action.run);
      dismiss.before(button);
    }
  }

  /** Removes the message `key`, if shown. */
  clear(key) {
    this.#box.querySelector(`[data-key="${key}"]`)?.remove();
  }

  /** Removes the messages about the previous input. */
  clearTransient() {
    for (const key of TRANSIENT) this.clear(key);
  }

  /** Whether the message `key` is shown. */
  has(key) {
    return this.#box.querySelector(`[data-key="${key}"]`) !== null;
  }

  /** Re-translates the buttons after a language change. */
  relabel() {
    for (const b of this.#box.querySelectorAll('[data-role="dismiss"]')) {
      b.setAttribute('aria-label', this.#t('dismiss'));
      b.title = this.#t('dismiss');
    }
  }
}

/** The text of any thrown value. */
export function messageOf(err) {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
