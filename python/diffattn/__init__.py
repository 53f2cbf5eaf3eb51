"""diffattn: capture an attention layer of a real model as a stages spec, save and load specs,
compute every stage of a spec in float64 (docs/DESIGN.md §6–§7, docs/MODELS.md), and draw it
live in a notebook (``diffattn.Explorer``, docs/EMBED.md)."""

from . import reference
from .capture import capture, capture_module
from .io import load, save
from .reference import SpecError, stages, to_json, validate

__all__ = ["capture", "capture_module", "load", "save", "reference", "stages", "to_json", "validate", "SpecError"]
__version__ = "0.1.0"


def __getattr__(name):
    # diffattn.Explorer, the notebook widget, needs anywidget (the `widget` extra); the rest of the
    # package never imports it, so it is loaded on first use (and kept out of __all__).
    if name == "Explorer":
        from .widget import Explorer

        return Explorer
    raise AttributeError(f"module 'diffattn' has no attribute {name!r}")
