"""Staged: the Jupyter widget of the pip package ``diffattn``, until ``python/`` is on main.

The pip package (``python/``, another branch) is where this belongs: ``widget.py`` moves to
``python/diffattn/widget.py``, ``python/diffattn/__init__.py`` adds ``from .widget import
Explorer``, and the package ships ``pkg/diffattn-explorer.inline.js`` as package data (see
``widget.py``). Until then ``scripts/check-jupyter`` puts this folder on ``PYTHONPATH`` so that
the notebook's ``import diffattn`` finds it.
"""

from .widget import Explorer

__all__ = ["Explorer"]
