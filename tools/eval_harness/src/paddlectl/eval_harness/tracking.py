"""MLflow: the only module of paddlectl that imports it.

A run is logged from its local directory (report first on disk, then here), tagged with its
local id so that logging is idempotent: a retry after "database is locked" or a ``sync`` after
a server outage finds a finished run and stops, or deletes a half-written one and starts over.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
from mlflow.entities import Metric, Param
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from .errors import TrackingUnavailable, UsageError
from .report import Report
from .retry import with_backoff
from .store import LOGGED, RunDir

LOCAL_ID_TAG = "paddlectl.local_id"
CHAMPION = "champion"
TRACKING_ERRORS = (MlflowException, requests.exceptions.RequestException, OSError)

# MLflow's own HTTP retries default to 7 with exponential backoff (minutes); the harness keeps
# results locally instead, so a dead server should be noticed in seconds.
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
# `--json` output must stay machine-readable: no "View run ... at" lines on stdout.
os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")


def default_uri(output_dir: Path) -> str:
    """The embedded default: a SQLite database under the output directory."""
    return f"sqlite:///{(Path(output_dir).resolve() / 'mlflow.db').as_posix()}"


def _is_sqlite(uri: str) -> bool:
    return uri.startswith("sqlite:")


def _probe(uri: str, timeout_s: float = 5.0) -> None:
    """Fail fast with TrackingUnavailable when an HTTP tracking server does not answer."""
    if not uri.startswith(("http://", "https://")):
        return
    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout_s) as response:  # noqa: S310
            response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise TrackingUnavailable(
            f"MLflow tracking server {uri} is unreachable ({exc}); the result is kept locally, "
            "run `paddlectl eval sync` once the server is back"
        ) from None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialise SQLite schema creation across processes (MLflow's migrations are not concurrent-safe)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Tracker:
    """An MLflow client bound to one tracking URI and, for SQLite, one artifact folder."""

    def __init__(self, uri: str, output_dir: Path) -> None:
        self.uri = uri
        self.output_dir = Path(output_dir)
        _probe(uri)
        self.artifact_root = (self.output_dir / "mlartifacts").resolve().as_uri() if _is_sqlite(uri) else None
        try:
            if _is_sqlite(uri):
                with _file_lock(self.output_dir / ".mlflow.db.lock"):
                    self.client = with_backoff(lambda: self._connect())
            else:
                self.client = self._connect()
        except TRACKING_ERRORS as exc:
            raise TrackingUnavailable(f"cannot open the MLflow tracking store {uri}: {exc}") from None

    def _connect(self) -> MlflowClient:
        client = MlflowClient(tracking_uri=self.uri, registry_uri=self.uri)
        client.search_experiments(max_results=1)  # opens (and for SQLite, migrates) the store now
        return client

    # ----- logging ----------------------------------------------------------------------------
    def log(self, run: RunDir) -> str:
        """Log a local run (idempotently) and register its model; returns the MLflow run id."""
        try:
            run_id = with_backoff(lambda: self._log_once(run))
        except TRACKING_ERRORS as exc:
            run.set_state(last_error=f"{type(exc).__name__}: {exc}"[:500], tracking_uri=self.uri)
            raise TrackingUnavailable(
                f"logging run {run.local_id} to {self.uri} failed ({type(exc).__name__}: {str(exc)[:200]}); "
                f"the result is kept in {run.path}, run `paddlectl eval sync` to upload it"
            ) from None
        run.set_state(status=LOGGED, run_id=run_id, tracking_uri=self.uri, last_error=None)
        return run_id

    def _experiment_id(self, name: str) -> str:
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return found.experiment_id
        try:
            return self.client.create_experiment(name, artifact_location=self._artifact_location(name))
        except MlflowException:
            found = self.client.get_experiment_by_name(name)  # another process created it first
            if found is None:
                raise
            return found.experiment_id

    def _artifact_location(self, name: str) -> str | None:
        if self.artifact_root is None:
            return None
        return f"{self.artifact_root}/{name.replace('/', '_')}"

    def _log_once(self, run: RunDir) -> str:
        report = run.report()
        experiment_id = self._experiment_id(report.experiment)
        for existing in self.client.search_runs(
            [experiment_id], filter_string=f"tags.`{LOCAL_ID_TAG}` = '{report.local_id}'"
        ):
            if existing.info.status == "FINISHED":
                return existing.info.run_id
            self.client.delete_run(existing.info.run_id)  # half-written by an interrupted attempt
        mlrun = self.client.create_run(
            experiment_id,
            run_name=f"{report.model_name}-{report.local_id}",
            tags={LOCAL_ID_TAG: report.local_id, "paddlectl.task": report.task, "paddlectl.model": report.model_name,
                  "paddlectl.fingerprint": report.fingerprint, "mlflow.source.git.commit": report.git_sha or ""},
        )  # fmt: skip
        run_id = mlrun.info.run_id
        now = int(time.time() * 1000)
        metrics = [Metric(k, float(v), now, 0) for k, v in report.metrics.items() if _finite(v)]
        params = [Param(k, v) for k, v in _params(report).items()]
        for start in range(0, max(len(params), len(metrics)), 100):
            self.client.log_batch(run_id, metrics=metrics[start : start + 100], params=params[start : start + 100])
        for path in run.artifacts():
            rel = path.parent.relative_to(run.path)
            self.client.log_artifact(run_id, str(path), None if str(rel) == "." else rel.as_posix())
        self._log_model(run_id, Path(report.model_path))
        self._register(report, run_id)
        self.client.set_terminated(run_id, "FINISHED")
        return run_id

    def _log_model(self, run_id: str, model_path: Path) -> None:
        if model_path.is_dir():
            self.client.log_artifacts(run_id, str(model_path), "model")
        elif model_path.is_file():
            self.client.log_artifact(run_id, str(model_path), "model")

    def _register(self, report: Report, run_id: str) -> None:
        name = report.model_name
        with contextlib.suppress(MlflowException):
            self.client.create_registered_model(name)  # exists already after the first run
        source = f"{self.client.get_run(run_id).info.artifact_uri}/model"
        self.client.create_model_version(
            name, source, run_id=run_id, tags={LOCAL_ID_TAG: report.local_id}, await_creation_for=0
        )

    # ----- reading ----------------------------------------------------------------------------
    def report(self, run_id: str) -> Report:
        """The report.json logged with an MLflow run."""
        try:
            self.client.get_run(run_id)
        except MlflowException:
            raise UsageError(
                f"run {run_id!r} is not in the tracking store {self.uri}; check the id or --tracking-uri"
            ) from None
        with tempfile.TemporaryDirectory() as tmp:
            path = self.client.download_artifacts(run_id, "report.json", tmp)
            return Report.read(Path(path))

    def champion_run_id(self, model_name: str) -> str | None:
        """The run behind the ``champion`` alias of ``model_name``, or None when there is none yet."""
        try:
            return self.client.get_model_version_by_alias(model_name, CHAMPION).run_id
        except MlflowException:
            return None

    def promote(self, run_id: str) -> tuple[str, str]:
        """Point the ``champion`` alias at the model version registered by ``run_id``."""
        versions = self.client.search_model_versions(f"run_id = '{run_id}'")
        if not versions:
            raise UsageError(
                f"run {run_id!r} registered no model in {self.uri}; evaluate the model with `paddlectl eval run` first"
            )
        version = max(versions, key=lambda v: int(v.version))
        self.client.set_registered_model_alias(version.name, CHAMPION, version.version)
        return version.name, version.version

    def history(self, metric: str, experiment: str | None) -> list[dict[str, Any]]:
        """Finished runs holding ``metric``, oldest first: start time, run id, model, value."""
        if experiment is not None:
            found = self.client.get_experiment_by_name(experiment)
            if found is None:
                raise UsageError(f"no experiment {experiment!r} in {self.uri}; see `mlflow ui` for the names")
            ids = [found.experiment_id]
        else:
            ids = [e.experiment_id for e in self.client.search_experiments()]
        rows = []
        for r in self.client.search_runs(ids, filter_string="attributes.status = 'FINISHED'", max_results=5000):
            if metric in r.data.metrics:
                rows.append({"start_time": r.info.start_time, "run_id": r.info.run_id,
                             "model": r.data.tags.get("paddlectl.model", ""), "value": r.data.metrics[metric]})  # fmt: skip
        return sorted(rows, key=lambda row: row["start_time"])


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = str(value)[:6000]


def _params(report: Report) -> dict[str, str]:
    """The resolved config, package versions, git sha and machine facts as MLflow params."""
    out: dict[str, str] = {}
    _flatten("config", report.config, out)
    _flatten("version", report.versions, out)
    _flatten("machine", report.machine, out)
    _flatten("cost", report.cost, out)  # the price the cost metrics were computed at, and its source
    out["machine.fingerprint"] = report.fingerprint
    out["git_sha"] = report.git_sha or "n/a"
    out["model_path"] = report.model_path
    return {k[:250]: v for k, v in out.items()}
