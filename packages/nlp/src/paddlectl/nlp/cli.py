"""`paddlectl nlp`: sentence embeddings, semantic search and checkpoint comparison from the command line."""

from __future__ import annotations

import typer

app = typer.Typer(help="NLP: sentence embeddings, semantic search, checkpoint comparison.", no_args_is_help=True)
