// Multi-layer spec files (docs/DESIGN.md §7.11): `{"layers": [spec, ...]}` in JSON, or the
// binary form whose tensors are `layers.I.FIELD`. The page's module reads one spec (the
// smallest reader: the first view's download budget), so this file, in the spec files' chunk,
// hands it one layer: the list's entry as JSON text, or a safetensors file of that layer's
// tensors renamed to their fields. The module then checks it as any spec.

const utf8 = new TextDecoder();
const LAYERS = /^\uFEFF?\s*\{\s*"layers"\s*:/;

/**
 * Layer `wanted` (from 1; the first when the file has no such layer) of a multi-layer file as a
 * single-layer spec: `{ spec, layer, layers }`, or null for a single-layer spec (read as it is).
 * Throws an Error naming the field for a list that is not one, or is empty.
 */
export function pickLayer(spec, wanted) {
  if (typeof spec === 'string') return LAYERS.test(spec.slice(0, 256)) ? fromJson(spec, wanted) : null;
  const binary = header(spec);
  if (binary) return binary.spec && 'layers' in binary.spec ? fromBinary(spec, binary, wanted) : null;
  return LAYERS.test(utf8.decode(spec.subarray(0, 256))) ? fromJson(utf8.decode(spec), wanted) : null;
}

function list(layers) {
  if (!Array.isArray(layers)) throw new Error('layers: expected a list of layers, each a spec (a JSON object)');
  if (!layers.length) throw new Error('layers: an empty list: a multi-layer file holds at least one layer');
  return layers;
}

const index = (wanted, count) => (Number.isInteger(wanted) && wanted >= 1 && wanted <= count ? wanted - 1 : 0);

function fromJson(text, wanted) {
  const layers = list(JSON.parse(text.replace(/^\uFEFF/, '')).layers);
  const i = index(wanted, layers.length);
  return { spec: JSON.stringify(layers[i]), layer: i + 1, layers: layers.length };
}

/** A safetensors file's header and its `spec`, or null when the bytes are not one. */
function header(bytes) {
  if (bytes.length < 9 || bytes[8] !== 0x7b) return null;
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (n > bytes.length - 8) return null;
  try {
    const head = JSON.parse(utf8.decode(bytes.subarray(8, 8 + n)));
    return { head, start: 8 + n, spec: JSON.parse(head.__metadata__.spec) };
  } catch {
    return {}; // the module says what is wrong with it
  }
}

function fromBinary(bytes, { head, start, spec }, wanted) {
  const layers = list(spec.layers);
  const i = index(wanted, layers.length);
  const out = {};
  const parts = [];
  let offset = 0;
  for (const [name, info] of Object.entries(head)) {
    if (name === '__metadata__') continue;
    const m = /^layers\.(0|[1-9]\d*)\.(.+)$/.exec(name);
    if (!m || Number(m[1]) >= layers.length) throw new Error(`${name}: a tensor of a multi-layer file is named layers.I.FIELD, I from 0 to ${layers.length - 1}`);
    if (Number(m[1]) !== i) continue;
    const [b, e] = info.data_offsets ?? [];
    const part = bytes.subarray(start + b, start + e);
    out[m[2]] = { ...info, data_offsets: [offset, offset + part.length] };
    parts.push(part);
    offset += part.length;
  }
  out.__metadata__ = { ...head.__metadata__, spec: JSON.stringify(layers[i]) };
  const text = new TextEncoder().encode(JSON.stringify(out));
  const file = new Uint8Array(8 + text.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(text.length), true);
  file.set(text, 8);
  let at = 8 + text.length;
  for (const part of parts) {
    file.set(part, at);
    at += part.length;
  }
  return { spec: file, layer: i + 1, layers: layers.length };
}
