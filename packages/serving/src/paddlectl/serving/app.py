"""The Starlette app: Open Inference Protocol v2 routes, the task-level route, token streaming, metrics.

Every model route goes through ``_answer``: a request id, the key check (``Gate.admit``), the
work, the key's cost settled, one log line (key *name* and environment, never the key) and the
metrics; a ``ServeError`` becomes its status with ``{"error": {"code", "message"}}``, anything
else a 500 ``internal`` whose detail stays in the log.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import __version__
from .access import Gate
from .bodies import OrjsonResponse, parse_json, read_body
from .errors import ServeError
from .metrics import Metrics
from .protocol import decode_inputs, encode_outputs, requested_outputs
from .service import Service, Slot
from .settings import ServeSettings
from .streaming import generate_stream
from .uploads import decode_image, media_file

log = logging.getLogger("paddlectl.serving")
REQUEST_ID = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")


def error_response(error: ServeError, request_id: str) -> OrjsonResponse:
    return OrjsonResponse(error.body(), error.status, headers={**error.headers, "X-Request-Id": request_id})


class Server:
    """The app's state: settings, models, key gate, review queue, metrics."""

    def __init__(self, settings: ServeSettings, keys=None, env: str | None = None) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.service = Service(settings, self.metrics)
        self.gate = Gate(keys, env, cost_of=self.service.cost_of)
        self.review = None
        if settings.server.review_queue is not None:
            from .checks import ReviewQueue

            self.review = ReviewQueue(settings.server.review_queue)

    def limits(self) -> tuple[int, float]:
        return self.settings.server.max_body_bytes, self.settings.server.body_timeout_s

    async def _answer(self, request: Request, model: str, work) -> Response:
        given = request.headers.get("x-request-id", "")
        request_id = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        start, key, env, admission, cost = time.monotonic(), "-", None, None, 0.0
        try:
            admission = self.gate.admit(request.headers.get("authorization"), model)
            key, env = admission.key_name, admission.key_env
            response, served, rows = await work(request_id)
            cost, error = self.service.cost_of(served, rows), None
        except ServeError as exc:
            response, error = error_response(exc, request_id), exc.code
        except Exception:  # noqa: BLE001 - the client sees a stable code, the log the traceback
            log.exception("request %s to %s failed", request_id, model)
            response, error = (
                error_response(ServeError(500, "internal", "the server failed; see its log"), request_id),
                "internal",
            )
        if admission is not None:  # a failed request costs its key nothing: the reservation is given back
            self.gate.settle(admission, cost)
        response.headers["X-Request-Id"] = request_id
        seconds = time.monotonic() - start
        self.metrics.answered(model, key, response.status_code, seconds, error)
        log.info("%s %s model=%s key=%s env=%s status=%d %.1fms", request_id, request.scope["path"], model, key, env,
                 response.status_code, seconds * 1000)  # fmt: skip
        return response

    # ----- protocol routes -------------------------------------------------------------------------
    async def live(self, request: Request) -> Response:
        return OrjsonResponse({"live": True})

    async def ready(self, request: Request) -> Response:
        body = {"ready": self.service.ready}
        if self.service.failure:
            body["error"] = self.service.failure
        return OrjsonResponse(body, 200 if self.service.ready else 503)

    async def server_metadata(self, request: Request) -> Response:
        return OrjsonResponse({"name": "paddlectl-serving", "version": __version__, "extensions": ["model_repository"]})

    async def model_metadata(self, request: Request) -> Response:
        name = request.path_params["name"]

        async def work(request_id):
            slot = self.service.slot(name)
            return OrjsonResponse(slot.model.metadata()), name, 0

        return await self._answer(request, name, work)

    async def model_ready(self, request: Request) -> Response:
        name = request.path_params["name"]
        ok = self.service.ready and name in self.service.slots
        return OrjsonResponse({"name": name, "ready": ok}, 200 if ok else 404 if self.service.ready else 503)

    async def infer(self, request: Request) -> Response:
        name = request.path_params["name"]

        async def work(request_id):
            slot = self.service.slot(name)
            body = parse_json(await read_body(request, *self.limits()))
            deadline = slot.deadline()

            async def run(target: Slot):
                arrays = decode_inputs(body, target.model.inputs)
                wanted = requested_outputs(body, target.model.output_names())
                rows = target.model.elements(arrays)
                outputs, model = await target.batcher.submit(arrays, rows, deadline)
                return {
                    "model_name": target.name,
                    "model_version": str(model.version),
                    "id": str(body.get("id", request_id)),
                    "outputs": encode_outputs(model.output_names(), outputs, wanted),
                }, rows

            (result, rows), served = await self.service.call(slot, run)
            return OrjsonResponse(result), served.name, rows

        return await self._answer(request, name, work)

    async def reload(self, request: Request) -> Response:
        name = request.path_params["name"]

        async def work(request_id):
            version = await self.service.reload(name)
            return OrjsonResponse({"name": name, "version": str(version)}), name, 0

        return await self._answer(request, name, work)

    async def metrics_route(self, request: Request) -> Response:
        data, content_type = self.metrics.exposition()
        return Response(data, media_type=content_type)

    # ----- task-level routes -----------------------------------------------------------------------
    async def task_route(self, request: Request) -> Response:
        name, _, verb = request.path_params["target"].rpartition(":")
        if verb not in ("predict", "generate"):
            raise HTTPException(404, "use /v1/models/NAME:predict or /v1/models/NAME:generate")

        async def work(request_id):
            slot = self.service.slot(name)
            body = await read_body(request, *self.limits())
            if verb == "generate":
                return await generate_stream(self, slot, body), name, 1
            content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
            deadline = slot.deadline()

            async def run(target: Slot):
                return await self._predict(target, content_type, body, deadline)

            (records, model, rows), served = await self.service.call(slot, run)
            result: dict[str, Any] = {"id": request_id, "model_name": served.name, "model_version": str(model.version),
                                      "task": model.task_name, "predictions": records}  # fmt: skip
            if served.check is not None:
                problems = served.check.problems(records)
                if problems:
                    if self.review is not None:
                        await asyncio.to_thread(
                            self.review.put, request_id, served.name, problems, {"predictions": records}
                        )
                    result["review"] = {"queued": self.review is not None, "problems": problems}
            return OrjsonResponse(result), served.name, rows

        return await self._answer(request, name, work)

    async def _predict(self, target: Slot, content_type: str, body: bytes, deadline: float):
        model = target.model
        if model.task is None:
            raise ServeError(
                400, "no_task", f"model {target.name!r} was saved without a task; call /v2/models/{target.name}/infer"
            )
        pre, post = model.saved.meta["preprocess"], model.saved.meta["postprocess"]
        if content_type.startswith("image/"):
            raws = [await asyncio.to_thread(decode_image, body, self.settings.server.max_image_pixels)]
        elif content_type in ("application/json", ""):
            raws = _json_inputs(parse_json(body), model.task_name)
        else:
            with media_file(body, content_type) as path:
                arrays = await _preprocess(model.task, pre, [path])
            return await self._run_task(target, arrays, post, deadline)
        return await self._run_task(target, await _preprocess(model.task, pre, raws), post, deadline)

    async def _run_task(self, target: Slot, arrays, post, deadline):
        rows = target.model.elements(arrays)
        outputs, model = await target.batcher.submit(arrays, rows, deadline)
        records = await asyncio.to_thread(model.task.postprocess, post, outputs)
        return records, model, rows

    def routes(self) -> list[Route]:
        return [
            Route("/v2", self.server_metadata),
            Route("/v2/health/live", self.live),
            Route("/v2/health/ready", self.ready),
            Route("/v2/models/{name}", self.model_metadata),
            Route("/v2/models/{name}/ready", self.model_ready),
            Route("/v2/models/{name}/infer", self.infer, methods=["POST"]),
            Route("/v2/repository/models/{name}/load", self.reload, methods=["POST"]),
            Route("/v1/models/{target}", self.task_route, methods=["POST"]),
            Route("/metrics", self.metrics_route),
        ]


async def _preprocess(task, pre: dict, raws: list) -> list[np.ndarray]:
    from paddlectl.framework.errors import PaddlectlError

    try:
        return await asyncio.to_thread(task.preprocess, pre, raws)
    except PaddlectlError as exc:
        raise ServeError(400, "bad_input", str(exc)) from None


def _json_inputs(body: Any, task: str) -> list:
    """``{"inputs": [...]}``: texts for NLP tasks, pixel arrays (nested lists) for the others; a
    string is never taken as a path, so a request cannot make the server read its files."""
    inputs = body.get("inputs") if isinstance(body, dict) else None
    if not isinstance(inputs, list) or not inputs:
        raise ServeError(
            400, "bad_request", 'send {"inputs": [...]} (texts, or images as nested lists), or an image/* body'
        )
    text = task.startswith("nlp.")
    for item in inputs:
        if text and not isinstance(item, str):
            raise ServeError(400, "bad_input", f"a {task} model takes texts; got {type(item).__name__}")
        if not text and not isinstance(item, list):
            raise ServeError(
                400, "bad_input", f"a {task} model takes images: upload one as the body, or send nested lists"
            )
    if text:
        return inputs
    try:
        return [np.asarray(item, dtype=np.float32) for item in inputs]
    except (ValueError, TypeError) as exc:
        raise ServeError(400, "bad_input", f"an input is not a numeric array ({exc})") from None


def build_app(server: Server) -> Starlette:
    @asynccontextmanager
    async def lifespan(app):
        loading = asyncio.get_running_loop().create_task(server.service.start())
        try:
            yield
        finally:
            if not loading.done():
                loading.cancel()
            await server.service.stop()
            server.gate.close()

    return Starlette(routes=server.routes(), lifespan=lifespan, exception_handlers={HTTPException: _http_error})


HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


async def _http_error(request: Request, exc: HTTPException) -> Response:
    """Starlette's own refusals (no such route, wrong method) in the same JSON shape as ours."""
    code = HTTP_CODES.get(exc.status_code, "bad_request")
    return OrjsonResponse({"error": {"code": code, "message": f"{request.method} {request.url.path}: {exc.detail}"}},
                        exc.status_code, headers=exc.headers)  # fmt: skip
