"""The node interface: the hooks through which the traversal skeleton steps through any game.

The MCCFR traversals (:mod:`holdem.solver.kernels`) are written once, against the hooks below,
each taking the game's *kernel form* (a namedtuple of arrays: ``Game.kernel``) as first argument.
A game kind implements every hook beside its own code and registers the implementations for its
kernel namedtuple with :func:`implement`; numba picks them at compile time from the namedtuple's
type (``numba.extending.overload``) and inlines them, so every game gets its own specialization
of the same skeleton, as fast as a hand-written copy.

Implemented today by :mod:`holdem.games.tree_kernels` (games whose betting tree is enumerated:
Kuhn, Leduc, heads-up NLHE) and :mod:`holdem.games.nlhe.multiway_kernels` (the implicit 3-6
player NLHE game). A game's module must be imported before a kernel is first compiled for it;
building the game (``make_game``) does that.

Hooks (``ws``: the traversal's Workspace; ``d``: a stack level, holding the node being visited):

- :func:`start`: put the root at level 0.
- :func:`is_terminal` / :func:`terminal_value`: whether the traverser's value at level ``d`` is
  fixed, and that value.
- :func:`open_node`: at a decision node, its (player, street, num_actions, infoset key); also
  stores ``ws.num_actions[d]`` and whatever the game needs to step to a child later.
- :func:`find_infoset`: the infoset's store entry (NOT_FOUND when it cannot be added).
- :func:`to_child`: write child ``a`` of level ``d`` into level ``dst`` (``d`` itself, or
  ``d + 1``).
- :func:`child_key`: the infoset key of child ``a`` when the traverser's play continues there
  (a decision node), else -1; may overwrite level ``d + 1``.
- :func:`last_street`: the street on which pruning stops.

A game also says whether the skeleton's outcome-sampling traversal is compiled for it
(``implement(..., outcome_sampling=False)`` for games that support external sampling only).
"""

from numba.core import types

from holdem._jit import overload_inline

HOOKS = ("start", "is_terminal", "terminal_value", "open_node", "find_infoset", "to_child",
         "child_key", "last_street")
_IMPLS = {name: {} for name in HOOKS}
_OUTCOME = {}


def implement(kernel_type, outcome_sampling=True, **impls):
    """Register ``impls`` (hook name -> plain Python function taking the hook's arguments) as
    the node hooks of games whose kernel form is the namedtuple class ``kernel_type``."""
    missing = set(HOOKS) - set(impls)
    unknown = set(impls) - set(HOOKS)
    if missing or unknown:
        raise TypeError(f"{kernel_type.__name__}: node hooks missing {sorted(missing)}, "
                        f"unknown {sorted(unknown)}")
    for name, impl in impls.items():
        _IMPLS[name][kernel_type] = impl
    _OUTCOME[kernel_type] = bool(outcome_sampling)


def _kernel_class(game):
    if isinstance(game, types.BaseNamedTuple):
        return game.instance_class
    return None


def supports_outcome_sampling(game):
    """At compile time: whether ``game`` (a numba type) is a kernel game that takes the
    outcome-sampling traversal."""
    return _OUTCOME.get(_kernel_class(game), False)


def _hook(stub):
    """Make ``stub`` a hook: at compile time, the implementation registered for the namedtuple
    type of its first argument."""
    impls = _IMPLS[stub.__name__]

    @overload_inline(stub, strict=False)
    def typer(game, *args):
        return impls.get(_kernel_class(game))
    return stub


@_hook
def start(game, ws):
    """Put the root at stack level 0."""


@_hook
def is_terminal(game, ws, d, traverser):
    """Whether ``traverser``'s value at level ``d`` is fixed (a terminal; multi-way, also once
    the traverser has folded)."""


@_hook
def terminal_value(game, ws, d, traverser):
    """Chips won by ``traverser`` at the terminal level ``d`` (float64)."""


@_hook
def open_node(game, ws, d):
    """(player, street, num_actions, infoset key) of the decision node at level ``d``; stores
    ``ws.num_actions[d]`` (and, multi-way, the actions in ``ws.akind[d]`` / ``ws.ato[d]``)."""


@_hook
def find_infoset(game, write, key, num_actions):
    """The store entry of infoset ``key`` in ``write``, inserted if new (NOT_FOUND when the game
    cannot guarantee room for it and there is none)."""


@_hook
def to_child(game, ws, d, a, dst):
    """Write child ``a`` of the node at level ``d`` into level ``dst`` (``d`` or ``d + 1``)."""


@_hook
def child_key(game, ws, d, a):
    """Infoset key of child ``a`` of level ``d`` if it is a decision node of the traversal, else
    -1 (may overwrite level ``d + 1``)."""


@_hook
def last_street(game):
    """The last street (no pruning there)."""
