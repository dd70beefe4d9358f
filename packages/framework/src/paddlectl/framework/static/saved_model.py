"""The saved inference model (DESIGN.md §4): a directory of ``model.json`` + ``model.safetensors``,
written by ``jit.save`` and ``static.save_inference_model``, read by ``jit.load``, the predictor and
``static.load_inference_model``.

``model.json`` holds the format name and version, the producer and its version, the program in
text form, input/output specs, the output structure, the pre/post-processing config, the weights
file's size and SHA-256, and the verification report when one was made. Nothing in the directory
is ever executed: the program is parsed by ``static.parser`` and the weights are safetensors.

Format versions: 1 is the first. A reader refuses a newer version (naming both) and reads every
older one it lists in ``READABLE_VERSIONS``. The directory is written beside its final place and
renamed into it, so a reader never sees half a model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass

import numpy as np
import safetensors
import safetensors.numpy

from ..errors import CheckpointError, PaddlectlError
from ..utils.fileio import atomic_write, umask
from .ir import Program
from .model_schema import schema_problem
from .parser import parse_program
from .printer import print_program
from .verifier import check_sizes

FORMAT = "paddlectl-inference-model"
FORMAT_VERSION = 1
READABLE_VERSIONS = (1,)
ONNX_METADATA_ENTRIES = ("preprocess", "postprocess", "lineage")
"""The model.json entries an exported ONNX file carries as JSON ``metadata_props``
(``hapi.export.export_model_dir`` writes them, ``onnx_metadata_entries`` reads them back)."""


def onnx_metadata_entries(metadata: dict) -> dict:
    """The ``ONNX_METADATA_ENTRIES`` found in an ONNX file's ``metadata_props`` (key -> text) as JSON
    objects, decoded; an entry that is missing or not a JSON object is left out."""
    found = {}
    for key in ONNX_METADATA_ENTRIES:
        try:
            value = json.loads(metadata[key])
        except (KeyError, TypeError, ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found[key] = value
    return found


MODEL_JSON = "model.json"
WEIGHTS = "model.safetensors"


def producer_version() -> str:
    from importlib.metadata import version

    return version("paddlectl-framework")


@dataclass
class SavedModel:
    """A model directory read back and checked: the program (with weights) and its metadata."""

    path: str
    program: Program
    meta: dict

    @property
    def input_names(self) -> list[str]:
        return [i["name"] for i in self.meta["inputs"]]

    @property
    def output_names(self) -> list[str]:
        return [o["name"] for o in self.meta["outputs"]]


def write_model_dir(path, program: Program, meta: dict) -> None:
    """Write ``program`` and ``meta`` (inputs, outputs, configs...) as a model directory, atomically."""
    path = os.path.abspath(os.fspath(path))
    if os.path.exists(path) and not os.path.isfile(os.path.join(path, MODEL_JSON)):
        if not os.path.isdir(path) or os.listdir(path):
            raise FileExistsError(
                f"jit.save: {path} exists and is not a saved model directory; choose a new path or remove it"
            )
    weights = {k: np.ascontiguousarray(v) for k, v in program.weights.items()}
    blob = safetensors.numpy.save(weights) if weights else safetensors.numpy.save({})
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "producer": {"name": "paddlectl-framework", "version": producer_version()},
        "program": print_program(program),
        **meta,
        "weights": {"file": WEIGHTS, "bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()},
    }
    text = json.dumps(document, indent=1)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.", dir=parent)
    try:
        with atomic_write(os.path.join(tmp, WEIGHTS), "wb") as f:
            f.write(blob)
        with atomic_write(os.path.join(tmp, MODEL_JSON), "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o777 & ~umask())  # mkdtemp makes a private directory; a model directory is ordinary data
        old = None
        if os.path.exists(path):
            old = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.old.", dir=parent)
            os.rmdir(old)
            os.rename(path, old)
        os.rename(tmp, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_model_dir(path) -> SavedModel:
    """Read and check a model directory; anything missing, malformed or tampered -> CheckpointError.

    Order: the JSON document, its format and version, the schema (``model_schema``), the weights'
    size and SHA-256, the safetensors blob, the program text, and the specs against the program."""
    path = os.fspath(path)

    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"{path}: {what}")

    meta = _read_document(path, bad)
    problem = schema_problem(meta)
    if problem is not None:
        raise bad(f"{MODEL_JSON} does not fit the format-{FORMAT_VERSION} schema: {problem}; export the model again")
    info = meta["weights"]
    weights_path = os.path.join(path, WEIGHTS)
    if not os.path.isfile(weights_path):
        raise bad(f"the weights file {WEIGHTS} is missing; copy the whole model directory")
    with open(weights_path, "rb") as f:
        blob = f.read()
    if len(blob) != info["bytes"] or hashlib.sha256(blob).hexdigest() != info["sha256"]:
        raise bad(
            f"{WEIGHTS} does not match the checksum in {MODEL_JSON} ({len(blob)} bytes, expected {info['bytes']}); "
            "it is truncated or was modified: export the model again"
        )
    try:
        weights = safetensors.numpy.load(blob)
    except (safetensors.SafetensorError, ValueError, TypeError) as exc:
        raise bad(f"{WEIGHTS} is not a valid safetensors file ({exc})") from None
    for array in weights.values():
        array.flags.writeable = False  # shared by every predictor clone; nothing may write into it
    try:
        program = check_sizes(parse_program(meta["program"], weights))
    except PaddlectlError as exc:
        raise bad(f"the program in {MODEL_JSON} is invalid or does not match the weights: {exc}") from None
    for what, specs, values in (
        ("input", meta["inputs"], program.inputs),
        ("output", meta["outputs"], program.outputs),
    ):
        mismatch = _spec_mismatch(specs, values)
        if mismatch:
            raise bad(f"{MODEL_JSON}'s {what} list does not match its program: {mismatch}")
    if [i["name"] for i in meta["inputs"]] != program.input_names:
        raise bad(f"{MODEL_JSON}'s input names do not match its program's {program.input_names}")
    return SavedModel(path, program, meta)


def _read_document(path: str, bad) -> dict:
    """model.json parsed, of this format and a readable version (checked before the schema: a newer
    version may have another schema, and deserves the "upgrade" message)."""
    meta_path = os.path.join(path, MODEL_JSON)
    if not os.path.isfile(meta_path):
        raise bad(f"not a saved model directory (no {MODEL_JSON}); write one with paddle.jit.save(layer, path, ...)")
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad(f"{MODEL_JSON} is not valid JSON ({exc}); the file is corrupted, export the model again") from None
    except RecursionError:
        raise bad(f"{MODEL_JSON} nests deeper than a JSON reader follows; it is not a file jit.save wrote") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise bad(
            f"{MODEL_JSON} is not a {FORMAT} file (format {meta.get('format') if isinstance(meta, dict) else None!r})"
        )
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise bad(f"{MODEL_JSON} has no integer format_version (got {version!r})")
    if version > FORMAT_VERSION:
        producer = meta.get("producer") if isinstance(meta.get("producer"), dict) else {}
        raise bad(
            f"the model was written in format version {version} (by {producer.get('name')} {producer.get('version')}), "
            f"but this paddlectl-framework {producer_version()} reads format versions up to {FORMAT_VERSION}; "
            "upgrade paddlectl-framework to load it"
        )
    if version not in READABLE_VERSIONS:
        raise bad(f"format version {version} is not supported; readable versions: {list(READABLE_VERSIONS)}")
    return meta


def _spec_mismatch(specs: list, values: list) -> str | None:
    """How the declared specs disagree with the program's values (count, dtype, rank), or None."""
    if len(specs) != len(values):
        return f"{len(specs)} declared, the program has {len(values)}"
    for spec, value in zip(specs, values, strict=True):
        if spec["dtype"] != value.dtype.name or len(spec["shape"]) != len(value.shape):
            return (
                f"{spec['name']!r} is declared {spec['dtype']}{spec['shape']}, the program has "
                f"{value.dtype.name}{list(value.shape)}"
            )
    return None
