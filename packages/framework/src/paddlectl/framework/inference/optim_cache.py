"""The optimisation cache: a predictor's program after the passes, kept on disk, so that the next
load of the same model with the same settings skips the ONNX import and the pass pipeline (Paddle's
``Config.set_optim_cache_dir``; OpenVINO's model cache does the same job). A second load of
PP-OCRv4's detector went from ~0.33 s to ~0.05 s.

An entry is a saved-model directory (``write_model_dir``: written whole or not at all, checksummed;
read back by ``read_model_dir``, which checks it as it checks any model from disk) named by a key
over everything the result depends on: the model (its files' bytes, or the program and weights a
caller read), the passes switched off, the thread count the passes plan for, this framework's code,
NumPy's and Numba's versions and the CPU's vector features (``fuse_fc`` packs weights to the vector
width). An entry that fails its checks is a miss and is rewritten; a cache that cannot be written
is skipped, as the kernel cache is. The folder keeps at most ``LIMIT_BYTES``: writing an entry
removes the least recently used ones past it (an evaluation over many checkpoints would otherwise
leave a copy of each), and a model over a quarter of it is not kept (``worth_keeping``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np

from ..compiler.report import CompileReport, GroupRecord
from ..errors import PaddlectlError
from ..kernels.kernel_cache import cache_dir
from ..static.passes import OptimizeResult, PassContext, PassRecord
from ..static.passes.memory_plan import MemoryPlanner
from ..static.printer import print_program
from ..static.saved_model import MODEL_JSON, WEIGHTS, SavedModel, read_model_dir, write_model_dir

LIMIT_BYTES = 1 << 30
"""The folder's size past which the least recently used entries go."""

ENTRY = "optimization"
"""The entry's own record in its model.json: the key, the thread count, the pass records and the
fusion report of the run that wrote it."""


def default_dir() -> Path:
    """``programs`` inside the kernel cache (``$PADDLECTL_KERNEL_CACHE`` or ``~/.cache/paddlectl/kernels``),
    so one setting moves or empties every cache."""
    return cache_dir() / "programs"


@functools.cache
def code_fingerprint() -> str:
    """This framework's source files (names, sizes, modification times) and the libraries and CPU
    features that shape the optimised program: a change to any of them invalidates every entry."""
    import llvmlite.binding as llvm
    import numba

    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder, subfolders, files in sorted(os.walk(root)):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            stat = os.stat(os.path.join(folder, name))
            digest.update(f"{os.path.relpath(folder, root)}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    features = numba.config.CPU_FEATURES or llvm.get_host_cpu_features().flatten()
    digest.update(f"numpy {np.__version__} numba {numba.__version__} cpu {features}".encode())
    return digest.hexdigest()


def worth_keeping(path, saved: SavedModel | None) -> bool:
    """Whether a model is small enough to keep: one over a quarter of ``LIMIT_BYTES`` would push the
    rest out, and hashing and copying it costs more of its load than the passes save."""
    try:
        if saved is not None:
            size = sum(w.nbytes for w in saved.program.weights.values())
        elif os.path.isfile(path):
            size = os.path.getsize(path)
        else:
            size = os.path.getsize(os.path.join(path, WEIGHTS))
    except (OSError, TypeError):
        return False
    return size <= LIMIT_BYTES // 4


def _hash_files(digest, paths) -> None:
    for path in paths:
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        digest.update(b"\0")


_EXTERNAL_MARK = b"\x0a\x08location"
"""How an ONNX file names an external-data file: a ``StringStringEntryProto`` whose key (field 1,
8 bytes) is ``location``. Without these bytes the file holds all its weights (importing ``onnx``
to look costs ~50 ms in a new process)."""


def _external_files(path: str) -> list[str]:
    """The external-data files an ONNX file's initializers name (read as the import reads them)."""
    import onnx
    from onnx.external_data_helper import uses_external_data

    model = onnx.load(path, load_external_data=False)
    folder = os.path.dirname(path)
    external = {
        entry.value
        for tensor in model.graph.initializer
        if uses_external_data(tensor)
        for entry in tensor.external_data
        if entry.key == "location"
    }
    return [os.path.join(folder, name) for name in sorted(external)]


def file_key(path: str, settings: str) -> str:
    """The key of a model named by its path: its files' bytes and ``settings``."""
    digest = hashlib.sha256(f"file\n{settings}\n{code_fingerprint()}\n".encode())
    if os.path.isfile(path):  # an ONNX file, read once, and any external-data files it names
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(data + b"\0")
        _hash_files(digest, _external_files(path) if _EXTERNAL_MARK in data else [])
    else:
        _hash_files(digest, [os.path.join(path, MODEL_JSON), os.path.join(path, WEIGHTS)])
    return digest.hexdigest()[:32]


def content_key(saved: SavedModel, settings: str) -> str:
    """The key of a model a caller read (and may have changed): its program text and weights."""
    digest = hashlib.sha256(f"content\n{settings}\n{code_fingerprint()}\n".encode())
    digest.update(print_program(saved.program).encode())
    for name in sorted(saved.program.weights):
        array = np.ascontiguousarray(saved.program.weights[name])
        digest.update(f"\n{name} {array.dtype.str} {array.shape}\n".encode())
        digest.update(array.data)
    return digest.hexdigest()[:32]


def load(folder: Path, key: str) -> tuple[SavedModel, OptimizeResult, int] | None:
    """The entry for ``key``: (the optimised model, its pass result, its thread count), or None when
    there is none or it fails its checks."""
    entry = folder / key
    if not (entry / MODEL_JSON).is_file():
        return None
    try:
        saved = read_model_dir(entry)
        record = saved.meta[ENTRY]
        if record["key"] != key:
            return None
        fusion = record["fusion"]
        report = None
        if fusion is not None:
            groups = [GroupRecord(**group) for group in fusion["groups"]]
            report = CompileReport(groups, str(fusion["cache_dir"]), [str(s) for s in fusion["skipped"]])
            report.as_dict()  # a mistyped group fails here, not in the user's report
        records = [
            PassRecord(str(r["name"]), bool(r["ran"]), int(r["changed"]), float(r["seconds"])) for r in record["passes"]
        ]
        planned = any(r.name == "memory_plan" and r.ran for r in records)
        threads = int(record["threads"])
        if threads < 1:
            return None
        context = PassContext(
            threads=threads,
            compile_report=report,
            memory=MemoryPlanner(saved.program) if planned else None,
        )
        result = OptimizeResult(saved.program, records, context, cached_in=str(entry))
    except (PaddlectlError, KeyError, TypeError, ValueError):
        return None
    with contextlib.suppress(OSError):
        os.utime(entry / MODEL_JSON)  # used now: the last to go when the folder is trimmed
    return saved, result, context.threads


def store(folder: Path, key: str, result: OptimizeResult, meta: dict) -> None:
    """Write the entry for ``key``; a folder that cannot be written leaves the cache out."""
    report = result.compile_report
    record = {
        "key": key,
        "threads": result.context.threads,
        "passes": [dataclasses.asdict(r) for r in result.records],
        "fusion": None
        if report is None
        else {
            "groups": [dataclasses.asdict(g) for g in report.groups],
            "cache_dir": report.cache_dir,
            "skipped": list(report.skipped),
        },
    }
    own = {"format", "format_version", "producer", "program", "weights"}  # write_model_dir's, for the new program
    try:
        write_model_dir(
            folder / key, result.program, {**{k: v for k, v in meta.items() if k not in own}, ENTRY: record}
        )
        trim(folder, LIMIT_BYTES)
    except OSError:
        pass


def trim(folder: Path, limit: int) -> None:
    """Remove the least recently used entries until the folder holds at most ``limit`` bytes."""
    entries = []
    for entry in folder.iterdir():
        try:
            stats = [(entry / name).stat() for name in (MODEL_JSON, WEIGHTS)]
        except OSError:
            continue
        entries.append((stats[0].st_mtime_ns, stats[0].st_size + stats[1].st_size, entry))
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries):
        if total <= limit:
            break
        shutil.rmtree(entry, ignore_errors=True)
        total -= size
