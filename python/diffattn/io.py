"""Saving and loading stages specs: JSON (`.json`) or safetensors (`.safetensors`).

The binary form (docs/DESIGN.md §7.8) is a plain safetensors file: the array fields of the
spec (ARRAY_FIELDS) are tensors named as the fields, stored float32; every other field stays
JSON, in the header's `__metadata__` as {"format": "diffattn.stages", "version": "1",
"spec": "<the JSON object of the other fields>"}. Any safetensors reader opens it; this
module reads and writes the format itself (it is an 8-byte length, a JSON header and the raw
little-endian bytes), so the package needs only numpy.
"""

import json
import struct

import numpy as np

from .reference import SpecError, to_json

FORMAT = "diffattn.stages"
VERSION = "1"

# The fields that may be tensors in the binary form; all are vectors or matrices of numbers.
ARRAY_FIELDS = (
    "x",
    "w_q",
    "w_k",
    "w_v",
    "w_o",
    "b_q",
    "b_k",
    "b_v",
    "b_o",
    "lambda_q1",
    "lambda_k1",
    "lambda_q2",
    "lambda_k2",
    "subln",
    "w_lambda",
    "w_output_gate",
    "b_output_gate",
)

_DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8")}


def save(spec, path):
    """Writes `spec` to `path`: JSON for `.json`, the binary form for `.safetensors`."""
    path = str(path)
    if path.endswith(".json"):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(to_json(spec), f, separators=(",", ":"), ensure_ascii=False)
    elif path.endswith(".safetensors"):
        if "layers" in spec:
            # A multi-layer file (DESIGN.md §7.11): layer i's array fields are `layers.i.FIELD`.
            tensors, rest = {}, {"layers": []}
            for i, layer in enumerate(spec["layers"]):
                own, other = _split(layer)
                tensors.update({f"layers.{i}.{k}": v for k, v in own.items()})
                rest["layers"].append(other)
        else:
            tensors, rest = _split(spec)
        metadata = {"format": FORMAT, "version": VERSION, "spec": json.dumps(to_json(rest), ensure_ascii=False)}
        write_safetensors(path, tensors, metadata)
    else:
        raise ValueError(f"{path}: the name must end in .json or .safetensors")


def _split(spec):
    """A spec's array fields as float32 tensors, and its other fields."""
    tensors = {k: np.asarray(v, dtype="<f4") for k, v in spec.items() if k in ARRAY_FIELDS and v is not None}
    return tensors, {k: v for k, v in spec.items() if k not in tensors}


def load(path):
    """Reads a spec saved by `save` (or written by hand): a dict, arrays as numpy float arrays
    in the binary form and as lists in JSON."""
    path = str(path)
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    if not path.endswith(".safetensors"):
        raise ValueError(f"{path}: the name must end in .json or .safetensors")
    tensors, metadata = read_safetensors(path)
    if metadata.get("format") != FORMAT:
        raise SpecError("__metadata__.format", f"expected {FORMAT!r}, found {metadata.get('format')!r}")
    if metadata.get("version") != VERSION:
        raise SpecError("__metadata__.version", f"expected {VERSION!r}, found {metadata.get('version')!r}")
    try:
        spec = json.loads(metadata.get("spec", ""))
    except json.JSONDecodeError as e:
        raise SpecError("__metadata__.spec", f"not JSON: {e}") from None
    if not isinstance(spec, dict):
        raise SpecError("__metadata__.spec", "expected a JSON object")
    multi = isinstance(spec.get("layers"), list)
    for name, array in tensors.items():
        target = spec
        if multi:
            # layers.i.FIELD of a multi-layer file (DESIGN.md §7.11).
            parts = name.split(".", 2)
            i = int(parts[1]) if len(parts) == 3 and parts[0] == "layers" and parts[1].isdigit() else -1
            if not 0 <= i < len(spec["layers"]) or not isinstance(spec["layers"][i], dict):
                raise SpecError(name, "a tensor of a multi-layer file is named layers.I.FIELD, I within the list")
            target, name = spec["layers"][i], parts[2]
        if name not in ARRAY_FIELDS:
            raise SpecError(name, f"a tensor that is not an array field ({', '.join(ARRAY_FIELDS)})")
        if name in target:
            raise SpecError(name, "given both as a tensor and in __metadata__.spec")
        target[name] = array.astype(np.float64)
    return spec


def write_safetensors(path, tensors, metadata):
    """Writes `tensors` (name -> little-endian float array) and string metadata as safetensors."""
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name]).tobytes()
        dtype = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64"}[tensors[name].dtype]
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as the library writes it
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    """Reads a safetensors file of F32/F64 tensors: (name -> numpy array, metadata dict)."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise SpecError("safetensors", "file too short")
    (size,) = struct.unpack("<Q", raw[:8])
    if size > len(raw) - 8:
        raise SpecError("safetensors", f"header of {size} bytes runs past the end of the file")
    try:
        header = json.loads(raw[8 : 8 + size])
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SpecError("safetensors", f"header is not JSON: {e}") from None
    data = memoryview(raw)[8 + size :]
    metadata = header.pop("__metadata__", None) or {}
    tensors = {}
    for name, info in header.items():
        dtype = _DTYPES.get(info.get("dtype"))
        if dtype is None:
            raise SpecError(name, f"dtype {info.get('dtype')!r}: expected F32 or F64")
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        if not 0 <= begin <= end <= len(data) or end - begin != dtype.itemsize * int(np.prod(shape)):
            raise SpecError(name, f"data_offsets {info['data_offsets']} do not fit shape {list(shape)}")
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(shape)
    return tensors, metadata
