"""Layering: which holdem modules may import which (docs/architecture.md), and no import cycles.

Every module under holdem/ is parsed with ``ast`` (nothing is imported), so an import is found
wherever it sits: at the top, inside a function, absolute or relative. Each rule is checked per
module, so a known violation can be marked on exactly the (rule, module) pair that has it.
Two cycle checks: one over the imports executed when a module is imported, and one over every
import, those inside functions included (a deferred import that closes a loop is a loop in the
design, even when it does not fail at run time). The scripts under tools/ are checked too: every
holdem module they import exists, and nothing in holdem imports them. Kernel modules are known
by their names (``*kernels``, ``_jit``, ``rng``), and every module that takes a decorator from
``_jit`` must be named so.
"""

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "holdem"
TOOLS = PACKAGE.parent / "tools"

FLOORS = (
    ("ground", ("holdem._jit", "holdem.rng", "holdem.cards", "holdem.fileio", "holdem.metrics",
                "holdem.config", "holdem.config_values", "holdem.container", "holdem.version",
                "holdem.registry", "holdem.game_sections")),
    ("evaluator, store", ("holdem.evaluator", "holdem.store")),
    ("delta", ("holdem.delta",)),
    ("checkpoint", ("holdem.checkpoint",)),
    ("abstraction", ("holdem.abstraction",)),
    ("games", ("holdem.games",)),
    ("solver", ("holdem.solver",)),
    ("analysis", ("holdem.analysis",)),
    ("subgame", ("holdem.subgame",)),
    ("runtime", ("holdem.runtime",)),
    ("training", ("holdem.training", "holdem.monitor", "holdem.logdir",
                  "holdem.checkpoint_writer")),
    ("cli", ("holdem.cli",)),
)
"""Ground floor up; a module may import its own floor and the floors below. The package itself
(``holdem/__init__.py``: ``__version__`` and lazy attributes) is the ground floor as a target
and checked by no floor rule as an importer. The game registry and the config the shipped games
bring (``holdem.game_sections``) are data the config validates against: ground floor, outside
holdem/games, which imports the config and is never imported by it. The delta wing (workers'
records and their merge) is a floor of its own above the store, which only the runtime
imports (rule ``delta``)."""


@dataclass(frozen=True)
class Import:
    importer: str
    target: str             # a module name: "holdem.games.tree", "numba.core", ...
    line: int
    at_import_time: bool    # runs when the importer is imported (not in a function or __main__)


def under(name, package):
    return name == package or name.startswith(package + ".")


def find_modules(root=PACKAGE, pattern="**/*.py"):
    """{module name: (source, is_package)} of every .py file under ``root``."""
    modules = {}
    for path in sorted(root.glob(pattern)):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path.read_text(encoding="utf-8"), is_package)
    return modules


def _is_main_block(node):
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def parse_imports(name, source, is_package, known):
    """Every import in one module's source; ``from pkg import x`` targets ``pkg.x`` when that is
    a module in ``known``, else ``pkg``."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found = []

    def visit(node, at_import_time):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend(Import(name, alias.name, child.lineno, at_import_time)
                             for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[:len(package) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module
                for alias in child.names:
                    sub = f"{module}.{alias.name}"
                    found.append(Import(name, sub if sub in known else module, child.lineno,
                                        at_import_time))
            deferred = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, at_import_time and not deferred and not _is_main_block(child))

    visit(ast.parse(source, filename=name), True)
    return found


def all_imports(modules):
    known = set(modules)
    return {name: parse_imports(name, source, is_package, known)
            for name, (source, is_package) in modules.items()}


def floor_of(module):
    if module == "holdem":
        return 0
    for level, (_, packages) in enumerate(FLOORS):
        if any(under(module, p) for p in packages):
            return level
    return None


def is_kernel_module(module):
    """The modules numba compiles, by name: ``*kernels``, ``_jit`` and ``rng``."""
    return (module.rsplit(".", 1)[-1].endswith("kernels")
            or module in ("holdem._jit", "holdem.rng"))


def _forbidden(*packages):
    return lambda importer, target: any(under(target, p) for p in packages)


def _kernels_forbid(importer, target):
    if under(target, "holdem.analysis"):
        return not (under(importer, "holdem.analysis") and is_kernel_module(target))
    return _forbidden("holdem.runtime", "holdem.cli", "holdem.training", "holdem.config",
                      "holdem.checkpoint")(importer, target)


def _config_forbids(importer, target):
    holdem_ok = (floor_of(target) == 0 and not is_kernel_module(target)   # kernels need numba
                 and not under(target, "holdem.games"))      # games import the config
    return under(target, "numba") or (under(target, "holdem") and not holdem_ok)


def _floors_forbid(importer, target):
    floor = floor_of(target)
    return floor is not None and floor > floor_of(importer)


ROOMS = {"lbr": {"matches"}, "matches": {"lbr"}, "ranges": set(), "export": set()}
"""The rooms of holdem/analysis/ (its sub-packages, by what they serve) and the other rooms each
may import; every room may import the root of analysis/. LBR and the matches share the played
hands' kernels (a blueprint's sampled action; the real hand and the bot's reading of it)."""
ROOM_USERS = ("holdem.analysis.evaluation", "holdem.analysis.blueprint")
"""The root modules that import rooms: the metrics (matches, LBR) and the Blueprint (ranges)."""


def room_of(module):
    """The analysis room of ``module`` ("root" for the rest of analysis/), or None outside it."""
    parts = module.split(".")
    if parts[:2] != ["holdem", "analysis"]:
        return None
    return parts[2] if len(parts) > 2 and parts[2] in ROOMS else "root"


def _rooms_forbid(importer, target):
    mine, theirs = room_of(importer), room_of(target)
    if theirs in (None, "root", mine):
        return False
    if mine == "root":
        return importer not in ROOM_USERS
    return theirs not in ROOMS[mine]


@dataclass(frozen=True)
class Rule:
    name: str
    text: str
    applies: object         # (importer) -> bool
    forbids: object         # (importer, target) -> bool


RULES = (
    Rule("analysis", "analysis imports neither runtime, training nor cli",
         lambda m: under(m, "holdem.analysis"),
         _forbidden("holdem.runtime", "holdem.training", "holdem.cli")),
    Rule("kinds", "analysis knows a game through holdem.games.interface and its capabilities, "
         "never through the No-Limit kind (holdem.games.nlhe)",
         lambda m: under(m, "holdem.analysis"), _forbidden("holdem.games.nlhe")),
    Rule("rooms", "an analysis room (lbr, matches, ranges, export) imports the root of "
         "analysis/ and only the rooms it shares code with (ROOMS); in the root only "
         "evaluation and blueprint import rooms", lambda m: under(m, "holdem.analysis"),
         _rooms_forbid),
    Rule("kernels", "kernel modules import no runtime, cli, training, config, checkpoint or "
         "analysis (analysis kernels may import kernels)", is_kernel_module, _kernels_forbid),
    Rule("store", "store imports neither runtime, solver, games, training nor cli",
         lambda m: under(m, "holdem.store"),
         _forbidden("holdem.runtime", "holdem.solver", "holdem.games", "holdem.training",
                    "holdem.cli")),
    Rule("delta", "only the runtime imports the delta wing (holdem.delta: workers' records and "
         "their merge)", lambda m: not under(m, "holdem.delta") and not under(m, "holdem.runtime"),
         _forbidden("holdem.delta")),
    Rule("config", "config imports only ground-floor modules without numba, not numba, and "
         "nothing under holdem.games (the games import the config: one direction)",
         lambda m: m == "holdem.config", _config_forbids),
    Rule("runtime", "runtime (the executors) imports neither training nor cli",
         lambda m: under(m, "holdem.runtime"), _forbidden("holdem.training", "holdem.cli")),
    Rule("cli", "only holdem.cli imports holdem.cli",
         lambda m: not under(m, "holdem.cli"), _forbidden("holdem.cli")),
    Rule("floors", "a module imports only its own floor and those below (docs/architecture.md)",
         lambda m: m != "holdem", _floors_forbid),
)

KNOWN_VIOLATIONS = {}          # (rule, module): why; marked as strict xfails while being fixed


def violations(rule, imports):
    """Lines describing each import of one module that ``rule`` forbids."""
    return [f"{i.importer} line {i.line} imports {i.target}: {rule.text}"
            for i in imports if rule.forbids(i.importer, i.target)]


def find_cycle(graph):
    """One import cycle as a list of modules (first == last), or None."""
    done, path, on_path = set(), [], set()

    def visit(node):
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            if nxt not in done:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def _packages_run_first(importer, target):
    """The target and the packages whose __init__ runs before it: its ancestors that are not
    also the importer's (those are already initialized, or being initialized, when the importer
    runs; a package's __init__ importing a submodule that imports a sibling is no loop)."""
    parts = target.split(".")
    chain = [".".join(parts[:k]) for k in range(1, len(parts) + 1)]
    return [m for m in chain if m == target or not under(importer, m)]


def import_time_graph(imports_by_module, deferred=False):
    """Importer -> the holdem modules that run when it is imported (directly); with
    ``deferred`` also those its functions import."""
    return {name: {m for i in imports if i.at_import_time or deferred
                   for m in _packages_run_first(name, i.target)
                   if m in imports_by_module and m != name}
            for name, imports in imports_by_module.items()}


IMPORTS = all_imports(find_modules())
TOOL_IMPORTS = {name: parse_imports(name, source, False, set(IMPORTS))
                for name, (source, _) in find_modules(TOOLS, "*.py").items()}


def _cases():
    for rule in RULES:
        for module in sorted(IMPORTS):
            if rule.applies(module):
                marks = ()
                if (rule.name, module) in KNOWN_VIOLATIONS:
                    marks = pytest.mark.xfail(strict=True,
                                              reason=KNOWN_VIOLATIONS[rule.name, module])
                yield pytest.param(rule, module, marks=marks, id=f"{rule.name}:{module}")


@pytest.mark.parametrize("rule, module", list(_cases()))
def test_module_respects_rule(rule, module):
    found = violations(rule, IMPORTS[module])
    assert not found, "\n".join(found)


def test_every_module_has_a_floor():
    assert [m for m in IMPORTS if m != "holdem" and floor_of(m) is None] == []


def test_no_import_cycle():
    cycle = find_cycle(import_time_graph(IMPORTS))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_even_through_deferred_imports():
    cycle = find_cycle(import_time_graph(IMPORTS, deferred=True))
    assert cycle is None, "import cycle (deferred imports included): " + " -> ".join(cycle)


def test_modules_using_numba_decorators_are_named_as_kernels():
    using = sorted(name for name, imports in IMPORTS.items()
                   if any(i.target == "holdem._jit" for i in imports))
    assert using and [m for m in using if not is_kernel_module(m)] == []


@pytest.mark.parametrize("tool", sorted(TOOL_IMPORTS))
def test_tool_imports_exist(tool):
    """A tool imports holdem modules that exist (``from holdem.x import name``: holdem.x)."""
    missing = [f"{tool} line {i.line} imports {i.target}" for i in TOOL_IMPORTS[tool]
               if under(i.target, "holdem") and i.target not in IMPORTS]
    assert missing == []


def test_holdem_never_imports_tools():
    found = [f"{i.importer} line {i.line} imports {i.target}" for imports in IMPORTS.values()
             for i in imports if under(i.target, "tools") or i.target in TOOL_IMPORTS]
    assert found == []


def test_importing_config_loads_no_numba_and_no_holdem_module_but_the_registry():
    """The registry, the shipped games' config declarations and the value tables, nothing
    under holdem.games."""
    code = ("import sys, holdem.config; print(' '.join(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('numba', 'numpy', 'holdem'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=PACKAGE.parent).stdout.split()
    assert out == ["holdem", "holdem.config", "holdem.config_values", "holdem.game_sections",
                   "holdem.registry", "holdem.version"]


# -- the checker itself catches each kind of violation ----------------------------------------
def _fake_imports(name, source, is_package=False, others=()):
    return parse_imports(name, source, is_package, set(IMPORTS) | {name, *others})


def _rule(name):
    return next(r for r in RULES if r.name == name)


@pytest.mark.parametrize("rule, module, source", [
    ("analysis", "holdem.analysis.fake", "def f():\n    from holdem.training import train\n"),
    ("analysis", "holdem.analysis.fake", "import holdem.runtime.pool\n"),
    ("analysis", "holdem.analysis.fake", "from ..cli import common\n"),
    ("kinds", "holdem.analysis.fake", "from holdem.games.nlhe.records import Action\n"),
    ("kinds", "holdem.analysis.fake", "def f():\n    from holdem.games import nlhe\n"),
    ("rooms", "holdem.analysis.export.fake", "from holdem.analysis.lbr import sampled\n"),
    ("rooms", "holdem.analysis.ranges.fake", "from ..matches import headtohead\n"),
    ("rooms", "holdem.analysis.exact", "from holdem.analysis.ranges import node\n"),
    ("kernels", "holdem.solver.fake_kernels", "from holdem import config\n"),
    ("kernels", "holdem.analysis.fake_kernels", "from holdem.analysis.matches import headtohead\n"),
    ("kernels", "holdem.rng", "from holdem.checkpoint import load\n"),
    ("store", "holdem.store.fake", "from ..games import make_game\n"),
    ("store", "holdem.store.fake", "class A:\n    def f(self):\n        import holdem.solver\n"),
    ("floors", "holdem.store.fake", "from holdem.delta import merge\n"),
    ("floors", "holdem.delta.fake", "from holdem.solver.solver import regret_floor_at\n"),
    ("delta", "holdem.analysis.fake", "from holdem.delta.records import RecordArena\n"),
    ("delta", "holdem.training", "def f():\n    from holdem.delta import merge\n"),
    ("config", "holdem.config", "import numba\n"),
    ("config", "holdem.config", "from holdem.games import interface\n"),
    ("config", "holdem.config", "from holdem import rng\n"),
    ("config", "holdem.config", "from holdem.games import registry\n"),
    ("runtime", "holdem.runtime.fake", "from holdem.training import train\n"),
    ("cli", "holdem.games.fake", "if __name__ == '__main__':\n    from holdem.cli import common\n"),
    ("floors", "holdem.games.fake", "from holdem.solver.solver import Solver\n"),
    ("floors", "holdem.evaluator.fake", "from . import kernels\nfrom .. import abstraction\n"),
])
def test_checker_catches(rule, module, source):
    rule = _rule(rule)
    assert rule.applies(module)
    assert len(violations(rule, _fake_imports(module, source))) == 1


@pytest.mark.parametrize("rule, module, source", [
    ("kernels", "holdem.analysis.fake_kernels",
     "from holdem.analysis.matches import play_kernels\n"),
    ("kinds", "holdem.analysis.fake", "from holdem.games.interface import Cards, Lines\n"),
    ("rooms", "holdem.analysis.lbr.fake", "from holdem.analysis.matches import play_kernels\n"),
    ("rooms", "holdem.analysis.export.fake", "from holdem.analysis import blueprint\n"),
    ("rooms", "holdem.analysis.evaluation", "from holdem.analysis.lbr import sampled\n"),
    ("kernels", "holdem.solver.fake_kernels", "from holdem import rng\n"),
    ("config", "holdem.config", "import yaml\nfrom holdem import cards\n"),
    ("floors", "holdem.cli.fake", "import holdem.training\nfrom . import common\n"),
    ("floors", "holdem.training", "from holdem.analysis.exact import ExactEvaluator\n"),
    ("floors", "holdem.delta.fake", "from holdem.store.store import RegretStore\n"),
    ("floors", "holdem.runtime.fake", "from holdem.delta.merge import RowMerger\n"),
])
def test_checker_allows(rule, module, source):
    rule = _rule(rule)
    assert rule.applies(module)
    assert violations(rule, _fake_imports(module, source)) == []


def test_relative_and_deferred_imports_are_resolved():
    found = _fake_imports("holdem.store.fake", "from . import kernels\nfrom ..games import tree\n"
                          "def f():\n    import holdem.cli.common as c\n"
                          "if __name__ == '__main__':\n    from holdem import training\n")
    assert [(i.target, i.at_import_time) for i in found] == [
        ("holdem.store.kernels", True), ("holdem.games.tree", True),
        ("holdem.cli.common", False), ("holdem.training", False)]
    package = _fake_imports("holdem.store", "from .store import RegretStore\n", is_package=True)
    assert [i.target for i in package] == ["holdem.store.store"]


def test_cycle_is_found_and_named():
    names = ("holdem.a", "holdem.b", "holdem.c", "holdem.d")
    sources = {"holdem.a": "import holdem.b\n", "holdem.b": "from holdem.c import x\n",
               "holdem.c": "def f():\n    import holdem.d\nfrom holdem import a\n",
               "holdem.d": ""}
    imports = {n: _fake_imports(n, s, others=names) for n, s in sources.items()}
    assert find_cycle(import_time_graph(imports)) == ["holdem.a", "holdem.b", "holdem.c",
                                                     "holdem.a"]
    imports["holdem.c"] = _fake_imports("holdem.c", "def f():\n    from holdem import a\n",
                                        others=names)
    assert find_cycle(import_time_graph(imports)) is None
    assert find_cycle(import_time_graph(imports, deferred=True)) == [
        "holdem.a", "holdem.b", "holdem.c", "holdem.a"]


def test_cycle_through_a_package_init_is_found():
    names = ("holdem.p", "holdem.p.sub", "holdem.p.other", "holdem.q")
    sources = {"holdem.p": ("from holdem.p import sub\nimport holdem.q\n", True),
               "holdem.p.sub": ("from holdem.p.other import x\n", False),
               "holdem.p.other": ("", False),
               "holdem.q": ("from holdem.p.other import x\n", False)}
    imports = {n: _fake_imports(n, s, is_package, others=names)
               for n, (s, is_package) in sources.items()}
    assert find_cycle(import_time_graph(imports)) == ["holdem.p", "holdem.q", "holdem.p"]
    imports["holdem.q"] = []                    # the package importing its own submodules
    assert find_cycle(import_time_graph(imports)) is None
