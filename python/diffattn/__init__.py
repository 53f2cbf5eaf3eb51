"""diffattn: capture an attention layer of a real model as a stages spec, save and load specs,
and compute every stage of a spec in float64 (docs/DESIGN.md §6–§7, docs/MODELS.md)."""

from . import reference
from .capture import capture, capture_module
from .io import load, save
from .reference import SpecError, stages, to_json, validate

__all__ = ["capture", "capture_module", "load", "save", "reference", "stages", "to_json", "validate", "SpecError"]
__version__ = "0.1.0"
