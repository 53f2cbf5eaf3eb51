"""tests/fixtures/real/ (the extended format's reference cases, for the Rust engine) are what
tests/fixtures/real/make.py makes with the current reference: no stale or hand-edited file."""

import importlib.util
import json

from helpers import REAL_FIXTURES, max_abs_difference

from diffattn.reference import MECHANISMS, stages, to_json


def _make_module():
    spec = importlib.util.spec_from_file_location("make_real_fixtures", REAL_FIXTURES / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_fixture_is_current():
    cases = _make_module().CASES
    on_disk = {p.name.replace(".spec.json", "") for p in REAL_FIXTURES.glob("*.spec.json")}
    assert on_disk == set(cases)
    mechanisms = set()
    for name, spec in cases.items():
        written = json.loads((REAL_FIXTURES / f"{name}.spec.json").read_text())
        assert max_abs_difference(written["x"], to_json(spec)["x"]) == 0, name
        expected = json.loads((REAL_FIXTURES / f"{name}.expected.json").read_text())
        assert max_abs_difference(to_json(stages(written)), expected) < 1e-12, name
        mechanisms.add(written["mechanism"])
    assert mechanisms == set(MECHANISMS), "every mechanism has a case"
