// Files in and out: reading a spec file a person picks or drops, and downloads (PNG, SVG,
// JSON) through an `<a download>` and a Blob URL.

import { make } from './dom.js';

/** The largest JSON spec file read, in bytes; a bigger one is refused before it is read. */
export const MAX_SPEC_BYTES = 64 * 1024 * 1024;

/**
 * The largest binary spec (`.safetensors`, DESIGN.md §7.8) read, in bytes: a 512-token capture
 * of a 2,048-wide layer with 16 heads is about 70 MB in f32.
 */
export const MAX_BINARY_SPEC_BYTES = 256 * 1024 * 1024;

/** Whether a file's name says it is the binary form of a spec. */
export function isBinarySpecName(name) {
  return /\.safetensors$/i.test(String(name ?? ''));
}

/**
 * Whether `bytes` look like the binary form: an 8-byte little-endian header length that fits in
 * the file, then the header's `{` (as the engine tells them apart).
 */
export function looksLikeSafetensors(bytes) {
  if (bytes.length < 9 || bytes[8] !== 0x7b) return false;
  let length = 0;
  for (let i = 7; i >= 0; i--) length = length * 256 + bytes[i];
  return length <= bytes.length - 8;
}

/** Whether `bytes` are UTF-8 text (a byte-order mark allowed), as a JSON spec must be. */
export function isUtf8(bytes) {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The most bytes the page reads of a file named `name`. */
export function specByteLimit(name) {
  return isBinarySpecName(name) ? MAX_BINARY_SPEC_BYTES : MAX_SPEC_BYTES;
}

/**
 * Reads a picked or dropped file's bytes, calling `onProgress(loaded, total)` as they come.
 * Rejects with `{ reason: 'too_large' | 'unreadable' | 'not_text' }` so the caller can say
 * which, in the page's language: a file that is neither the binary form nor UTF-8 (binary
 * garbage, another encoding) is not a spec, and is said to be so rather than decoded with
 * replacement characters into "not valid JSON at line 1 column 1".
 */
export async function readSpecFile(file, onProgress = () => {}) {
  if (file.size > specByteLimit(file.name)) throw Object.assign(new Error('too large'), { reason: 'too_large' });
  let bytes;
  try {
    const total = file.size;
    if (typeof file.stream !== 'function') {
      bytes = new Uint8Array(await file.arrayBuffer());
    } else {
      const out = new Uint8Array(total);
      const reader = file.stream().getReader();
      let loaded = 0;
      onProgress(0, total);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (loaded + value.length > total) throw new Error('the file grew while it was read');
        out.set(value, loaded);
        loaded += value.length;
        onProgress(loaded, total);
      }
      bytes = loaded === total ? out : out.subarray(0, loaded);
    }
  } catch {
    throw Object.assign(new Error('unreadable'), { reason: 'unreadable' });
  }
  if (!looksLikeSafetensors(bytes) && !isUtf8(bytes)) throw Object.assign(new Error('not UTF-8 text'), { reason: 'not_text' });
  return bytes;
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
