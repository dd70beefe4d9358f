"""Distributed checkpoints: one shard per rank plus ``metadata.json``, resharded on load."""

from .metadata import read_metadata
from .save_load import Sharded, load_state_dict, load_tensors, merge, save_state_dict

__all__ = ["Sharded", "load_state_dict", "load_tensors", "merge", "read_metadata", "save_state_dict"]
