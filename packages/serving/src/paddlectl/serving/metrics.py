"""``GET /metrics``: the server's Prometheus series, on a registry of its own (one per app).

Series are labelled by model and, where a request carried one, by key *name* (never the key).
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
BREAKER_STATES = {"closed": 0, "half_open": 1, "open": 2}


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self._answered: dict[tuple[str, str, int], tuple] = {}
        self.requests = Counter(
            "paddlectl_serve_requests",
            "Requests answered, by model, key name and status code.",
            ["model", "key", "code"],
            registry=r,
        )
        self.errors = Counter(
            "paddlectl_serve_errors",
            "Requests answered with an error, by model, key name and error code.",
            ["model", "key", "error"],
            registry=r,
        )
        self.latency = Histogram(
            "paddlectl_serve_request_seconds",
            "Time from request to response, by model and key name.",
            ["model", "key"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.batch_size = Histogram(
            "paddlectl_serve_batch_size",
            "Rows per model run (dynamic batching).",
            ["model"],
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.queue_depth = Gauge("paddlectl_serve_queue_depth", "Requests waiting for a batch.", ["model"], registry=r)
        self.breaker = Gauge(
            "paddlectl_serve_breaker_state", "Circuit breaker: 0 closed, 1 half-open, 2 open.", ["model"], registry=r
        )
        self.version = Gauge("paddlectl_serve_model_version", "The model version being served.", ["model"], registry=r)
        self.fallbacks = Counter(
            "paddlectl_serve_fallbacks", "Requests answered by the fallback model.", ["model", "fallback"], registry=r
        )
        self.tokens = Counter(
            "paddlectl_serve_tokens",
            "Tokens of generative requests, by direction (in/out).",
            ["model", "direction"],
            registry=r,
        )
        self.first_token = Histogram(
            "paddlectl_serve_time_to_first_token_seconds",
            "Time to the first streamed token.",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )

    def observer(self, model: str):
        """The callback a Batcher reports batch sizes and queue depth through."""
        batch_size, queue_depth = self.batch_size.labels(model), self.queue_depth.labels(model)

        def observe(what: str, value: float) -> None:
            if what == "batch_size":
                batch_size.observe(value)
            else:
                queue_depth.set(value)

        return observe

    def answered(self, model: str, key: str, status: int, seconds: float, error: str | None) -> None:
        series = self._answered.get((model, key, status))
        if series is None:  # labels() validates and locks on each call: look each series up once
            series = self._answered[model, key, status] = (
                self.requests.labels(model, key, str(status)),
                self.latency.labels(model, key),
            )
        series[0].inc()
        series[1].observe(seconds)
        if error is not None:
            self.errors.labels(model, key, error).inc()

    def breaker_state(self, model: str, state: str) -> None:
        self.breaker.labels(model).set(BREAKER_STATES.get(state, 0))

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
