"""The Open Inference Protocol (KServe v2) tensor encoding: JSON inputs -> checked arrays -> JSON outputs.

Triton and KServe clients send ``{"inputs": [{"name", "shape", "datatype", "data"}]}`` with the
data flat (row-major) or nested; we check every tensor against the model's input spec (name,
datatype, rank, each fixed dim; a symbolic dim such as the batch takes any size) before it
reaches a batch, so one malformed request can only fail itself.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import ServeError

DATATYPES = {
    "BOOL": "bool",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "FP16": "float16",
    "FP32": "float32",
    "FP64": "float64",
    "BYTES": "object",
}
"""Protocol datatype -> NumPy dtype name (the protocol's table; BF16 has no NumPy dtype)."""

BY_DTYPE = {v: k for k, v in DATATYPES.items()}
MAX_ELEMENTS = 1 << 26
"""The most elements one input may declare (256 MiB of FP32), checked before anything is allocated."""


def bad(code: str, message: str) -> ServeError:
    return ServeError(400, code, message)


@functools.cache
def datatype_of(dtype: str | np.dtype) -> str:
    """The protocol name of a model's NumPy dtype (a model with another dtype is refused at load);
    cached: NumPy builds a dtype's name anew on each read (~5 us, twice a request)."""
    return BY_DTYPE[np.dtype(dtype).name]


def tensor_metadata(spec: dict) -> dict:
    """A spec as the protocol lists it: symbolic dims as -1."""
    shape = [d if isinstance(d, int) else -1 for d in spec["shape"]]
    return {"name": spec["name"], "datatype": datatype_of(spec["dtype"]), "shape": shape}


def _shape(raw: Any, name: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in raw):
        raise bad("bad_shape", f"input {name!r}: shape must be a list of non-negative integers, got {raw!r}")
    if math.prod(raw) > MAX_ELEMENTS:
        raise ServeError(
            413, "tensor_too_large", f"input {name!r}: shape {raw} holds more than {MAX_ELEMENTS} elements"
        )
    return tuple(raw)


def _fits(shape: Sequence[int], spec: dict) -> bool:
    want = spec["shape"]
    return len(shape) == len(want) and all(not isinstance(w, int) or w == d for w, d in zip(want, shape, strict=True))


def _array(entry: dict, spec: dict) -> np.ndarray:
    name = spec["name"]
    shape = _shape(entry.get("shape"), name)
    datatype = entry.get("datatype")
    want = datatype_of(spec["dtype"])
    if datatype != want:
        raise bad("bad_datatype", f"input {name!r}: the model takes datatype {want}, got {datatype!r}")
    if not _fits(shape, spec):
        dims = [d if isinstance(d, int) else -1 for d in spec["shape"]]
        raise bad("bad_shape", f"input {name!r}: shape {list(shape)} does not fit the model's {dims} (-1: any size)")
    data = entry.get("data")
    if not isinstance(data, list):
        raise bad("bad_data", f"input {name!r}: data must be a JSON list (flat, row-major, or nested)")
    try:
        array = np.asarray(data, dtype=DATATYPES[want])
    except (ValueError, TypeError, OverflowError) as exc:
        raise bad("bad_data", f"input {name!r}: data is not a list of {want} values ({exc})") from None
    if array.size != math.prod(shape):
        raise bad(
            "bad_shape", f"input {name!r}: shape {list(shape)} needs {math.prod(shape)} values, data has {array.size}"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise bad("bad_data", f"input {name!r}: data holds NaN or infinite values")
    return array.reshape(shape)


def decode_inputs(body: Any, specs: list[dict]) -> list[np.ndarray]:
    """The request's tensors in the model's input order, each checked against its spec."""
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
        raise bad(
            "bad_request", 'the body must be a JSON object with "inputs": [{"name", "shape", "datatype", "data"}]'
        )
    given: dict[str, dict] = {}
    for entry in body["inputs"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise bad("bad_request", 'each input must be an object with a "name"')
        if entry["name"] in given:
            raise bad("bad_request", f"input {entry['name']!r} is given twice")
        given[entry["name"]] = entry
    names = [s["name"] for s in specs]
    unknown = sorted(set(given) - set(names))
    missing = [n for n in names if n not in given]
    if unknown or missing:
        raise bad("bad_input_name", f"the model takes inputs {names}; missing {missing}, unknown {unknown}")
    arrays = [_array(given[s["name"]], s) for s in specs]
    batch = {a.shape[0] for a in arrays if a.ndim}
    if len(batch) > 1:
        raise bad("bad_shape", f"the inputs disagree on the batch size: {sorted(batch)}")
    return arrays


def requested_outputs(body: dict, names: list[str]) -> list[str]:
    """The outputs the request asks for (all when it names none)."""
    wanted = body.get("outputs")
    if wanted is None:
        return names
    if not isinstance(wanted, list) or not all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in wanted):
        raise bad("bad_request", 'outputs must be a list of {"name": ...} objects')
    chosen = [o["name"] for o in wanted]
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise bad("bad_output_name", f"the model has no outputs {unknown}; its outputs are {names}")
    return chosen


def encode_outputs(names: list[str], arrays: list[np.ndarray], wanted: list[str]) -> list[dict]:
    """The protocol's output tensors, data flat in row-major order: numeric data stays a contiguous
    NumPy array, which the JSON answer (``bodies.OrjsonResponse``) writes without Python floats."""
    by_name = dict(zip(names, arrays, strict=True))
    return [
        {
            "name": n,
            "datatype": datatype_of(by_name[n].dtype),
            "shape": list(by_name[n].shape),
            "data": _flat(by_name[n]),
        }
        for n in wanted
    ]


def _flat(array: np.ndarray) -> np.ndarray | list:
    if array.dtype.kind in "biuf":
        return np.ascontiguousarray(array).ravel()
    return array.ravel().tolist()
