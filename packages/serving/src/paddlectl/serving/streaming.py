"""Token streaming for the NLP suite's causal LM as Server-Sent Events, with tokens in, tokens out
and time to first token per request.

The exported LM has no cache, so ``generate`` runs the model once per new token on the whole
sequence so far; each run after the first therefore *shows* the token chosen before it, and we
send it then (the last token once generation returns). Generation runs on a worker thread and
hands tokens to the event loop, so streaming one client never holds the others.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

from starlette.responses import StreamingResponse

from .bodies import parse_json
from .errors import ServeError

TASK = "nlp.causal_lm"
GENERATING: set[asyncio.Task] = set()
"""Running generations (the event loop keeps only weak references to tasks)."""
log = logging.getLogger("paddlectl.serving")
OPTIONS = ("max_length", "decode_strategy", "top_k", "top_p", "temperature", "seed", "stop_at_newline")


def _event(name: str, data: dict) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _request(body: bytes) -> tuple[str, dict]:
    request = parse_json(body)
    prompt = request.get("prompt") if isinstance(request, dict) else None
    if not isinstance(prompt, str) or not prompt:
        raise ServeError(400, "bad_request", 'send {"prompt": "text", "max_length": N, ...} to :generate')
    unknown = sorted(set(request) - {"prompt", *OPTIONS})
    if unknown:
        raise ServeError(400, "bad_request", f"unknown :generate options {unknown}; known: {list(OPTIONS)}")
    return prompt, {k: request[k] for k in OPTIONS if k in request}


def _generate(model, prompt: str, options: dict, emit) -> dict:
    """Runs on a worker thread: the whole generation, emitting each token as it becomes known."""
    from paddlectl.nlp.causal_lm.serving import generate_served
    from paddlectl.nlp.text_cls.vocab import CharTable

    tokens = CharTable(model.saved.meta["preprocess"]["vocab"]).tokens
    runs = 0

    def run(arrays):
        nonlocal runs
        if runs:
            emit(tokens[int(arrays[0][0, -1])])
        runs += 1
        return model.run(arrays)

    result = generate_served(run, model.saved.meta["preprocess"], model.saved.meta["postprocess"], prompt, **options)
    return {**result, "tokens_out": runs}


async def generate_stream(server, slot, body: bytes) -> StreamingResponse:
    """``POST /v1/models/NAME:generate``: ``token`` events, then one ``done`` event with the counts."""
    from paddlectl.framework.errors import PaddlectlError

    model = slot.model
    if model.task_name != TASK:
        raise ServeError(
            400, "not_generative", f"model {slot.name!r} is a {model.task_name} model; only {TASK} streams tokens"
        )
    prompt, options = _request(body)
    if slot.generating.locked():
        raise ServeError(
            503, "queue_full", f"model {slot.name!r} is streaming to {slot.settings.workers} clients (workers); retry shortly",
            {"Retry-After": "1"},
        )  # fmt: skip
    await slot.generating.acquire()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    start = time.monotonic()

    async def produce():
        try:
            result = await asyncio.to_thread(
                _generate, model, prompt, options, lambda t: loop.call_soon_threadsafe(queue.put_nowait, ("token", t))
            )
            await queue.put(("done", result))
        except (PaddlectlError, ValueError) as exc:
            await queue.put(("error", {"code": "bad_input", "message": str(exc)}))
        except Exception as exc:  # noqa: BLE001 - the stream ends with an error event instead of hanging
            log.exception("generation on %s failed", slot.name)
            await queue.put(("error", {"code": "model_failed", "message": f"model {slot.name!r} failed: {exc}"}))
        finally:
            slot.generating.release()

    producer = loop.create_task(produce())  # runs to the end even if the client leaves: its thread cannot stop
    GENERATING.add(producer)
    producer.add_done_callback(GENERATING.discard)

    async def events():
        sent, first = "", None
        while True:
            kind, value = await queue.get()
            if kind == "token":
                if first is None:
                    first = time.monotonic() - start
                    server.metrics.first_token.labels(slot.name).observe(first)
                sent += value
                yield _event("token", {"token": value})
            elif kind == "error":
                yield _event("error", {"error": value})
                return
            else:
                rest = value["text"][len(sent) :] if value["text"].startswith(sent) else ""
                if rest:
                    first = first if first is not None else time.monotonic() - start
                    yield _event("token", {"token": rest})
                tokens_in = len(value["prompt"])
                server.metrics.tokens.labels(slot.name, "in").inc(tokens_in)
                server.metrics.tokens.labels(slot.name, "out").inc(value["tokens_out"])
                yield _event("done", {
                    "text": value["text"], "score": value["score"], "unknown": value["unknown"],
                    "tokens_in": tokens_in, "tokens_out": value["tokens_out"],
                    "time_to_first_token_ms": round(first * 1000, 3), "model_version": str(model.version),
                })  # fmt: skip
                return

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
