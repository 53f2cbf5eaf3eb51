"""``diffattn.Explorer``: the explorer as a Jupyter widget (anywidget; ``pip install
./python[widget]``).

Its front end is the single-file build ``diffattn-explorer.inline.js`` (wasm, the default
trained model and the stylesheet inside), so it works offline in JupyterLab, Notebook 7,
VS Code and Colab, with no CDN. The synced traits carry the custom element's attribute names
(``text``, ``mechanism``, ``shift``, ``heads``, ...; docs/EMBED.md), plus ``spec``, a stages spec
as a dict, drawn in place of the sentence: one trait for each name of the Rust schema, listed in
the generated ``diffattn/_settings.py``. A trait left at ``None`` shows the explorer's default;
changing a trait from Python redraws; moving a control in the widget sets every trait to what
the explorer shows.

    import diffattn
    w = diffattn.Explorer(text="The cat sat on the mat.", shift=2, maps="A,D,fused")
    w            # the widget
    w.shift = 3  # redraws
"""

from __future__ import annotations

import os
import pathlib

import anywidget
import traitlets

from ._settings import TRAITS

#: The single-file build's name, beside this module (package data) or in a checkout's pkg/.
INLINE_BUILD = "diffattn-explorer.inline.js"


#: The front end when the single-file build is missing: a message instead of a dead widget.
_MISSING_FRONT_END = """export default { render({ el }) {
  const p = document.createElement('p');
  p.textContent = 'diffattn: the widget front end (diffattn-explorer.inline.js) was not built: run scripts/build-wasm and scripts/build-pkg, then reinstall';
  el.append(p);
} };
"""


def _inline_build():
    """The front end: ``$DIFFATTN_INLINE_JS``, the package's copy (``static/``, written by
    scripts/build-pkg, shipped as package data), or a checkout's ``pkg/`` (an editable install);
    without any, a module that says so in the notebook."""
    candidates = []
    if os.environ.get("DIFFATTN_INLINE_JS"):
        candidates.append(pathlib.Path(os.environ["DIFFATTN_INLINE_JS"]))
    here = pathlib.Path(__file__).resolve().parent
    candidates.append(here / "static" / INLINE_BUILD)
    candidates.extend(parent / "pkg" / INLINE_BUILD for parent in here.parents)
    for path in candidates:
        if path.is_file():
            return path
    return _MISSING_FRONT_END


class _CommaList(traitlets.Unicode):
    """A comma list of names (``"A,D,fused"``); a list, tuple or set of names is joined."""

    def validate(self, obj, value):
        if isinstance(value, (list, tuple, set, frozenset)):
            value = ",".join(str(v) for v in value)
        return super().validate(obj, value)


def _text():
    return traitlets.Unicode(None, allow_none=True).tag(sync=True)


def _list():
    return _CommaList(None, allow_none=True).tag(sync=True)


def _int():
    return traitlets.Int(None, allow_none=True).tag(sync=True)


def _float():
    return traitlets.Float(None, allow_none=True).tag(sync=True)


def _bool():
    return traitlets.Bool(None, allow_none=True).tag(sync=True)


class _Spec(traitlets.Dict):
    """A stages spec dict; numpy arrays (``diffattn.capture``'s) become lists, as in its JSON."""

    def validate(self, obj, value):
        if value is not None:
            from .reference import to_json

            value = to_json(value)
        return super().validate(obj, value)


_TRAITS = {"text": _text, "int": _int, "float": _float, "bool": _bool, "list": _list}


def _doc():
    """The class's docstring: what it is, then every trait the schema names (``_settings``)."""
    lines = [
        "Differential attention, every stage, live: ``Explorer(**state)``.",
        "",
        "Keyword arguments are the element's attributes (its state, ``gate``, ``maps``, ``controls``)",
        "and ``spec``; ``lambda`` is a Python keyword, so pass it as ``lambda_=0.3`` or",
        "``**{\"lambda\": 0.3}`` and read it as ``w.lambda_``. A trait left at ``None`` shows the",
        "explorer's default. The single-file build carries the default mechanism's trained model only.",
        "",
    ]
    lines += [f"``{name}``: {doc}" for name, _, doc in TRAITS]
    return "\n".join(lines)


class Explorer(anywidget.AnyWidget):
    __doc__ = _doc()

    _esm = _inline_build()

    # One synced trait per name of the schema (``_settings.TRAITS``); ``lambda`` is a Python
    # keyword, so the traits are set through the class namespace, under the element's names
    # (``lambda_`` below reads and writes that one).
    for _name, _kind, _ in TRAITS:
        if _kind == "spec":
            vars()[_name] = _Spec(default_value=None, allow_none=True).tag(sync=True)
        else:
            vars()[_name] = _TRAITS[_kind]()
    del _name, _kind, _

    #: The names ``Explorer(**state)`` takes (the element's attributes, but ``src``, plus ``spec``).
    STATE_NAMES = tuple(name for name, _, _ in TRAITS)

    def __init__(self, **state):
        if "lambda_" in state:
            if "lambda" in state:
                raise TypeError("Explorer() got both lambda_ and lambda; they are one setting")
            state["lambda"] = state.pop("lambda_")
        unknown = sorted(set(state) - set(self.STATE_NAMES))
        if unknown:
            raise TypeError(f"Explorer() got unknown names {', '.join(unknown)}; it takes {', '.join(self.STATE_NAMES)}")
        super().__init__(**state)

    @property
    def lambda_(self):
        """The ``lambda`` trait (λ of both Differential Transformers) under a name Python allows."""
        return getattr(self, "lambda")

    @lambda_.setter
    def lambda_(self, value):
        setattr(self, "lambda", value)
