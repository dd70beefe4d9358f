"""A column table: named numpy arrays of one length, rows taken by index.

Ratings, user and item features and the Adult table are all this one type, so splits and
vocabularies work on any of them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .errors import DataError, FeatureError


class Table:
    """Columns of equal length; ``table["rating"]`` or ``table.rating`` reads one."""

    def __init__(self, columns: Mapping[str, np.ndarray]) -> None:
        self.columns = {str(k): np.asarray(v) for k, v in columns.items()}
        lengths = {name: len(v) for name, v in self.columns.items()}
        if len(set(lengths.values())) > 1:
            raise DataError(f"table columns differ in length: {lengths}")

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise FeatureError(f"no column {name!r}; the table has {', '.join(self.columns) or 'none'}")
        return self.columns[name]

    def __getattr__(self, name: str) -> np.ndarray:
        if name.startswith("_") or name == "columns":
            raise AttributeError(name)
        try:
            return self[name]
        except FeatureError as exc:
            raise AttributeError(str(exc)) from None

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def take(self, indices) -> Table:
        """The rows at ``indices`` (an int array or a boolean mask), in that order."""
        indices = np.asarray(indices)
        return Table({name: column[indices] for name, column in self.columns.items()})

    def __repr__(self) -> str:
        return f"Table({len(self)} rows: {', '.join(self.columns)})"
