"""Our checkpoint format: one file, never a pickle.

Layout: ``MAGIC`` | 8-byte little-endian header length | header JSON | payload. The header holds the
format version, the payload's length and its SHA-256. The payload is a safetensors blob of every
array, and its ``__metadata__`` holds the JSON structure of the saved object, so the checksum
covers the structure too. Anything that does not check out is refused before any value is built.
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import safetensors.numpy

from ..core.dtype import bfloat16
from ..core.tensor import Tensor
from ..errors import CheckpointError
from ..ops.tensor_compat import DenseTensorView

MAGIC = b"PADDLECTL-CKPT\n"
VERSION = 1
_STRUCTURE_KEY = "paddlectl.structure"
_LEN = struct.Struct("<Q")
_BF16 = ".bf16"
"""Key suffix of a bfloat16 array, stored as its uint16 bits: safetensors' NumPy reader has no BF16."""
MAX_DEPTH = 128
"""Containers nested deeper are refused on save and on load: each level is three JSON levels in the
structure, and Python's JSON reader and our decoder recurse; state dicts nest a handful deep."""


def encode(obj) -> bytes:
    """The file's bytes for ``obj``; TypeError names the first value the format cannot hold."""
    arrays: dict[str, np.ndarray] = {}
    structure = _encode(obj, arrays, "obj", 0)
    payload = safetensors.numpy.save(arrays, metadata={_STRUCTURE_KEY: json.dumps(structure)})
    header = json.dumps(
        {
            "format": "paddlectl-checkpoint",
            "version": VERSION,
            "payload_bytes": len(payload),
            "payload_sha256": hashlib.sha256(payload).hexdigest(),
        }
    ).encode()
    return MAGIC + _LEN.pack(len(header)) + header + payload


def _store(array: np.ndarray, arrays: dict, where: str) -> str:
    key = str(len(arrays))
    if array.dtype == bfloat16:
        key, array = key + _BF16, array.view(np.uint16)
    if array.dtype.kind in "OUSV":
        raise TypeError(
            f"paddle.save: {where} is an ndarray of dtype {array.dtype}; only numeric and bool arrays can be saved"
        )
    arrays[key] = array if array.flags.c_contiguous else np.array(array, order="C")
    return key


def _encode(obj, arrays: dict, where: str, depth: int) -> dict:
    if depth > MAX_DEPTH:
        raise TypeError(f"paddle.save: {where[:60]}... nests containers deeper than {MAX_DEPTH} levels; flatten it")
    if isinstance(obj, Tensor):
        return {"t": "tensor", "k": _store(obj.numpy(), arrays, where), "name": obj.name}
    if isinstance(obj, np.ndarray | DenseTensorView):  # a view (x.get_tensor(), a scope variable's) as its array
        return {"t": "ndarray", "k": _store(np.asarray(obj), arrays, where)}
    if isinstance(obj, np.generic):
        return {"t": "npscalar", "k": _store(np.asarray(obj), arrays, where)}
    if obj is None or isinstance(obj, bool | int | str):
        return {"t": "value", "v": obj}
    if isinstance(obj, float):
        return {"t": "float", "v": obj.hex()}
    if isinstance(obj, bytes):
        return {"t": "bytes", "v": obj.hex()}
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not (key is None or isinstance(key, bool | int | float | str)):
                raise TypeError(
                    f"paddle.save: {where} has a key of type {type(key).__name__}; keys must be str, int, float or bool"
                )
            items.append([key, _encode(value, arrays, f"{where}[{key!r}]", depth + 1)])
        return {"t": "dict", "items": items}
    if isinstance(obj, list | tuple):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {"t": kind, "items": [_encode(v, arrays, f"{where}[{i}]", depth + 1) for i, v in enumerate(obj)]}
    raise TypeError(
        f"paddle.save: {where} is a {type(obj).__name__}; checkpoints hold Tensors, ndarrays, numbers, strings, "
        "bytes, None and dicts/lists/tuples of them (save a Layer or Optimizer through its state_dict())"
    )


def record_length(header: bytes) -> int | None:
    """The payload length a header declares, or None when it is not one ``encode`` wrote (the
    reader then takes the rest of the stream, and ``decode`` says what is wrong)."""
    try:
        size = json.loads(header)["payload_bytes"]
    except (ValueError, KeyError, TypeError):
        return None
    return size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


def decode(data: bytes, name: str, return_numpy: bool):
    """Verify the whole file, then rebuild the object; CheckpointError says what is wrong with ``name``."""
    arrays, structure = _verified_contents(data, name)
    try:
        return _decode(structure, arrays, return_numpy)
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"paddle.load: {name}: the structure does not match the arrays ({exc})") from None


def _verified_contents(data: bytes, name: str):
    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"paddle.load: {name}: {what}; the file is damaged or was not written by paddle.save")

    start = len(MAGIC)
    if len(data) < start + _LEN.size:
        raise bad("truncated inside the header")
    (header_len,) = _LEN.unpack_from(data, start)
    body = start + _LEN.size + header_len
    if body > len(data):
        raise bad(f"truncated: the header claims {header_len} bytes, the file has {len(data) - start - _LEN.size}")
    try:
        header = json.loads(data[start + _LEN.size : body])
        version, size, digest = header["version"], header["payload_bytes"], header["payload_sha256"]
    except (ValueError, KeyError, TypeError):
        raise bad("the header is not the JSON paddle.save writes") from None
    if version != VERSION:
        raise CheckpointError(
            f"paddle.load: {name} has checkpoint format version {version!r}, this paddlectl reads version {VERSION}; "
            "load it with the paddlectl release that wrote it"
        )
    payload = data[body:]
    if len(payload) != size:
        raise bad(f"payload is {len(payload)} bytes, the header says {size} (truncated or appended to)")
    if hashlib.sha256(payload).hexdigest() != digest:
        raise bad("payload SHA-256 does not match the header (corrupted or tampered with)")
    try:
        arrays = {
            k: v.view(bfloat16) if k.endswith(_BF16) and v.dtype == np.uint16 else v
            for k, v in safetensors.numpy.load(payload).items()
        }
        metadata = _safetensors_metadata(payload)
        text = metadata[_STRUCTURE_KEY]
    except Exception as exc:  # noqa: BLE001 - any failure here means a bad payload, reported as such
        raise bad(f"the payload is not a valid safetensors blob ({exc})") from None
    try:
        structure = json.loads(text)
    except RecursionError:
        structure = None
    except (TypeError, ValueError) as exc:
        raise bad(f"the saved object's structure is not valid JSON ({exc})") from None
    if structure is None or _depth(structure) > 3 * MAX_DEPTH + 2:
        raise bad(f"the saved object nests containers deeper than the {MAX_DEPTH} levels paddle.save writes")
    return arrays, structure


def _depth(node) -> int:
    """How deep JSON containers nest in ``node``, counted without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _safetensors_metadata(payload: bytes) -> dict:
    (length,) = _LEN.unpack_from(payload, 0)
    return json.loads(payload[_LEN.size : _LEN.size + length])["__metadata__"]


def _decode(node: dict, arrays: dict, return_numpy: bool):
    kind = node["t"]
    if kind == "tensor":
        array = arrays[node["k"]]
        if return_numpy:
            return array
        tensor = Tensor._wrap(array)
        tensor.name = node["name"]
        return tensor
    if kind == "ndarray":
        return arrays[node["k"]]
    if kind == "npscalar":
        return arrays[node["k"]][()]
    if kind == "value":
        return node["v"]
    if kind == "float":
        return float.fromhex(node["v"])
    if kind == "bytes":
        return bytes.fromhex(node["v"])
    if kind == "dict":
        return {key: _decode(value, arrays, return_numpy) for key, value in node["items"]}
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays, return_numpy) for v in node["items"]]
        return items if kind == "list" else tuple(items)
    raise ValueError(f"unknown node kind {kind!r}")
