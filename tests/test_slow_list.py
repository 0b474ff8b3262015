"""The quick tier's list (tests/slow.txt) names tests that exist, once each, and marks them."""

import ast
from pathlib import Path

from conftest import SLOW_LIST, slow_tests

ROOT = Path(__file__).resolve().parents[1]


def _functions(path):
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_listed_slow_test_exists_and_is_listed_once():
    lines = [line.split("#")[0].strip() for line in SLOW_LIST.read_text().splitlines()]
    lines = [line for line in lines if line]
    assert len(lines) == len(set(lines)) == len(slow_tests()) > 0
    for entry in lines:
        path, _, name = entry.partition("::")
        assert path.startswith("tests/test_") and name.startswith("test_"), entry
        assert (ROOT / path).is_file(), f"{entry}: no such file"
        assert name in _functions(ROOT / path), f"{entry}: no such test (renamed? update slow.txt)"


def test_listed_tests_are_marked_slow(request):
    marked = {item.nodeid.split("[")[0] for item in request.session.items
              if item.get_closest_marker("slow")}
    collected = {item.nodeid.split("[")[0] for item in request.session.items}
    assert slow_tests() & collected <= marked
