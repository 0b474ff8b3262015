"""Action abstraction for No-Limit Hold'em: which bet and raise sizes the abstract game allows.

Sizes are given per street and per raise depth (0 = the street's first bet or, preflop, the open
raise over the big blind; 1 = the first raise over it; deeper depths reuse the last list):

- preflop opens as big-blind multiples (raise *to* x big blinds), deeper preflop raises and every
  postflop size as pot fractions: a bet of f puts f x pot in; a raise of f raises *to*
  ``current bet + f x (pot after calling)``;
- optionally all-in, and a cap on bets + raises per street (the big blind is not a raise).

A size below the legal minimum raise becomes the minimum raise; one at or above the stack becomes
all-in; sizes that land on the same amount are merged (the smallest label wins). Off-tree sizes
are mapped to the two neighbouring abstract sizes with the pseudo-harmonic mapping of Ganzfried &
Sandholm (2013), eq. 3: a bet x between A < x < B (pot fractions) maps to A with probability
f(x) = (B - x)(1 + A) / ((B - A)(1 + x)) and to B otherwise.
"""

from dataclasses import asdict, dataclass, field

from holdem.game_sections import ActionsConfig

STREETS = ("preflop", "flop", "turn", "river")


@dataclass(frozen=True)
class ActionAbstraction(ActionsConfig):
    """Bet/raise menus (see the module docstring): the ``actions`` config section plus the
    lookups the tree builder needs. Amounts in big blinds or pot fractions."""

    @classmethod
    def from_config(cls, actions):
        return cls(**asdict(actions))

    def pot_fractions(self, street, depth):
        """Pot-fraction sizes at ``depth`` (postflop depth 0 = bet; preflop depth 1 = 3-bet)."""
        table = getattr(self, STREETS[street])
        index = depth - 1 if street == 0 else depth
        if not table or index < 0:
            return ()
        return tuple(table[min(index, len(table) - 1)])


@dataclass(frozen=True, order=True)
class AbstractRaise:
    """One abstract bet/raise: the street commitment it raises to, in chips, and its label."""

    to: int
    label: str = field(compare=False)
    is_all_in: bool = field(default=False, compare=False)


def _fmt(x):
    return f"{x:g}"


def raise_options(abstraction, street, depth, *, pot, current_bet, my_commit, min_raise_to,
                  max_to, big_blind):
    """The abstract raises open to a player, ordered by amount, merged and clamped.

    All amounts are chips. ``pot``: every chip put in so far (all streets, all players);
    ``current_bet``: the highest street commitment; ``my_commit``: the actor's street commitment;
    ``min_raise_to`` / ``max_to``: the legal minimum raise-to and the actor's all-in street
    commitment. Returns [] when no raise is legal (max_to <= current_bet).
    """
    if max_to <= current_bet:
        return []
    candidates = []
    if street == 0 and depth == 0:
        for x in abstraction.preflop_open:
            candidates.append((int(round(x * big_blind)), f"r{_fmt(x)}b"))
    to_call = current_bet - my_commit
    for f in abstraction.pot_fractions(street, depth):
        candidates.append((current_bet + int(round(f * (pot + to_call))), f"r{_fmt(f)}p"))
    out = {}
    for to, label in candidates:
        to = max(to, min_raise_to)
        if to >= max_to:
            continue                                  # becomes the all-in below
        if to not in out:
            out[to] = AbstractRaise(to, label)
    if abstraction.all_in or any(to >= max_to for to, _ in candidates):
        out[max_to] = AbstractRaise(max_to, "a", is_all_in=True)
    return sorted(out.values())


def pseudo_harmonic(x, a, b):
    """Probability that a bet of ``x`` pot is read as the smaller abstract size ``a``
    (a < x < b)."""
    if not a < b:
        raise ValueError(f"need a < b, got {a} and {b}")
    if x <= a:
        return 1.0
    if x >= b:
        return 0.0
    return (b - x) * (1.0 + a) / ((b - a) * (1.0 + x))


def translate(x, sizes):
    """Map an off-tree size ``x`` onto sorted abstract ``sizes`` (same unit, e.g. pot fractions).

    Returns [(index, probability)] with one or two entries summing to 1.
    """
    sizes = list(sizes)
    if not sizes:
        raise ValueError("no abstract sizes to translate to")
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError("abstract sizes must be strictly increasing")
    if x <= sizes[0]:
        return [(0, 1.0)]
    if x >= sizes[-1]:
        return [(len(sizes) - 1, 1.0)]
    for i in range(len(sizes) - 1):
        a, b = sizes[i], sizes[i + 1]
        if a <= x <= b:
            if x == a:
                return [(i, 1.0)]
            if x == b:
                return [(i + 1, 1.0)]
            p = pseudo_harmonic(x, a, b)
            return [(i, p), (i + 1, 1.0 - p)]
    raise AssertionError("unreachable")
