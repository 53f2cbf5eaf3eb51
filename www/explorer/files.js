// Files in and out: reading a spec file a person picks or drops, and downloads (PNG, SVG,
// JSON) through an `<a download>` and a Blob URL.

import { make } from './dom.js';

/** The largest spec file read, in bytes; a bigger one is refused before it is read. */
export const MAX_SPEC_BYTES = 64 * 1024 * 1024;

/**
 * Reads a picked or dropped file as text. Rejects with `{ reason: 'too_large' | 'unreadable' }`
 * so the caller can say which, in the page's language.
 */
export async function readSpecFile(file) {
  if (file.size > MAX_SPEC_BYTES) throw Object.assign(new Error('too large'), { reason: 'too_large' });
  try {
    return await file.text();
  } catch {
    throw Object.assign(new Error('unreadable'), { reason: 'unreadable' });
  }
}

/**
 * Makes `target` (an element, or the document) accept dropped files: `overlay` shows while
 * files are dragged over it, `onFile(file)` receives the first dropped file. Returns a
 * function that removes the listeners.
 */
export function acceptDrops(target, overlay, onFile) {
  let depth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes('Files');
  const listeners = {
    dragenter(event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth += 1;
      overlay.hidden = false;
    },
    dragover(event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
    },
    dragleave(event) {
      if (!hasFiles(event)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) overlay.hidden = true;
    },
    drop(event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth = 0;
      overlay.hidden = true;
      const file = event.dataTransfer.files?.[0];
      if (file) onFile(file);
    },
  };
  for (const [type, fn] of Object.entries(listeners)) target.addEventListener(type, fn);
  return () => {
    for (const [type, fn] of Object.entries(listeners)) target.removeEventListener(type, fn);
  };
}

/** Offers `blob` as a download named `filename`. */
export function download(blob, filename, parent = document.body) {
  const url = URL.createObjectURL(blob);
  const a = make('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  parent.append(a);
  a.click();
  a.remove();
  // Revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/** A canvas as a PNG blob. */
export function pngOf(canvas) {
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png');
  });
}

/** The canvases on one canvas, in a row (or a grid for many), on `background`. */
export function composite(canvases, background) {
  const gap = Math.round(16 * (globalThis.devicePixelRatio || 1));
  const perRow = canvases.length <= 6 ? canvases.length : Math.ceil(Math.sqrt(canvases.length));
  const rows = Math.ceil(canvases.length / perRow);
  const w = Math.max(...canvases.map((c) => c.width));
  const h = Math.max(...canvases.map((c) => c.height));
  const out = make('canvas');
  out.width = perRow * w + (perRow + 1) * gap;
  out.height = rows * h + (rows + 1) * gap;
  const ctx = out.getContext('2d');
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, out.width, out.height);
  canvases.forEach((c, i) => {
    const x = gap + (i % perRow) * (w + gap);
    const y = gap + Math.floor(i / perRow) * (h + gap);
    ctx.drawImage(c, x, y);
  });
  return out;
}

/** A file name part from any text: letters, digits, `.`, `_` and `-` only. */
export function safeName(text, fallback) {
  return String(text).replace(/\.json$/i, '').replace(/[^\w.-]+/g, '_') || fallback;
}
