"""``python -m paddlectl.eval_harness``: the ``paddlectl eval`` commands without the CLI package."""

from .cli import app

app(prog_name="paddlectl eval")
