"""MCCFR kernels: regret matching and iterative external- and outcome-sampling traversals.

One *iteration* is one traversal for each player (the traverser) on one sampled deal.

External sampling (Lanctot et al. 2009, "Monte Carlo Sampling for Regret Minimization"): at the
traverser's nodes every action is explored; chance and the other players are sampled from the
current strategy. At a traverser infoset I with strategy sigma and sampled action values u(a),
v = sum_a sigma(a) u(a) and regret(I, a) += w * (u(a) - v) (Lanctot eq. 4.15). The average
strategy is accumulated at the other players' nodes: strategy_sum(I) += w_s * sigma(I).

Outcome sampling (ibid., eq. 4.13): one terminal history z is sampled with probability q(z), the
traverser's actions from (1 - eps) * sigma + eps * uniform; along the path regret(I, a) +=
w * pi_-i(h) / q(h) * (u~(ha) - u~(h)) with tail estimates u~. The average strategy is updated at
the next player's nodes with weight pi_-i(h) / q(h).

Each traversal is written once, for every game: how it steps through a game's nodes (a betting
tree's node ids, or the implicit multi-way game's state rows) is chosen at compile time from the
game's type by the node hooks of :mod:`holdem.games.node_kernels`, which each game implements.

Regret matching reads only a store's rows and lives beside the store
(:mod:`holdem.store.strategy_kernels`, with the average strategy); drawing an action from a
strategy is :mod:`holdem.rng`'s (:func:`holdem.rng.sample_action`); both are importable from
here too.

Traversals are iterative with an explicit stack (a recursive njit function cannot be cached
safely and ran 2.5-4x slower). Regrets are read from ``read`` and written to ``write``: the same
store when training in-process, a shared store and a private delta buffer in a worker.

Weighting (linear CFR / Pluribus discounting) is applied as an increasing weight on new
increments instead of a sweep that shrinks old ones: discounting everything by k/(k+1) at step k
equals weighting the increments of interval k by k+1 (Brown & Sandholm 2019, "Solving Imperfect-
Information Games via Discounted Regret Minimization", sec. 3). Regret floor and pruning
thresholds are given in current-weight units and scaled by w here.
"""

from collections import namedtuple

import numpy as np

from holdem import rng
from holdem._jit import njit, njit_inline, overload_inline
from holdem.games import deal_kernels
from holdem.games import node_kernels as nodes
from holdem.rng import pick_action, sample_action  # noqa: F401
from holdem.store import kernels as store_kernels
from holdem.store.strategy_kernels import normalize_positive, regret_matching  # noqa: F401

SAMPLING_EXTERNAL = 0
SAMPLING_OUTCOME = 1

WEIGHT_CONSTANT = 0
WEIGHT_STEPPED = 1

NO_FLOOR = -3.0e38

Params = namedtuple("Params", [
    "sampling", "exploration", "opp_exploration",
    "weight_mode", "weight_interval", "weight_stop", "fixed_weight",
    "regret_floor", "prune_start", "prune_prob", "prune_threshold",
    "avg_max_street", "strategy_interval", "is_delta", "own_weight",
    "dcfr_interval", "dcfr_stop", "dcfr_alpha", "dcfr_beta", "dcfr_gamma",
])

Workspace = namedtuple("Workspace", [
    "node",            # int64[D]: tree games, the node id at each stack level
    "rows",            # int64[D, W]: games that compute nodes, the state row at each level
    "akind", "ato",    # int64[D, A]: multi-way, the actions at each level
    "num_actions", "next_action", "offset", "sigma", "util", "explored",
    "player", "action", "sample_prob", "opp_reach", "sample_reach",     # outcome sampling
    "payoff",          # float64[MAX_PLAYERS]: multi-way terminal payoffs
    "buckets", "strength", "deck",                                      # the deal
    "visits",          # int64[2]: decision nodes visited; infosets skipped (store full)
    "read_entry",      # int64[E]: in a worker, the shared store's entry of each delta row,
                       #   at the row's value offset (so the split needs no second lookup)
])


def make_workspace(max_depth, max_actions, num_players, num_streets=4, deck_size=52,
                   row_width=1, payoff_size=2):
    """Scratch arrays of the traversals for a game of at most ``max_depth`` actions in a hand
    and ``max_actions`` actions at a node; ``row_width`` and ``payoff_size`` size the state rows
    and terminal payoffs of games that compute nodes (one layout serves every game)."""
    d, a = max_depth + 2, max(2, max_actions)
    return Workspace(
        node=np.zeros(d, np.int64), rows=np.zeros((d, max(1, row_width)), np.int64),
        akind=np.zeros((d, a), np.int64), ato=np.zeros((d, a), np.int64),
        num_actions=np.zeros(d, np.int64), next_action=np.zeros(d, np.int64),
        offset=np.zeros(d, np.int64),
        sigma=np.zeros((d, a), np.float64), util=np.zeros((d, a), np.float64),
        explored=np.zeros((d, a), np.bool_), player=np.zeros(d, np.int64),
        action=np.zeros(d, np.int64), sample_prob=np.zeros(d, np.float64),
        opp_reach=np.zeros(d, np.float64), sample_reach=np.zeros(d, np.float64),
        payoff=np.zeros(max(1, payoff_size), np.float64),
        buckets=np.zeros((num_players, num_streets), np.int64),
        strength=np.zeros(num_players, np.int64), deck=np.zeros(max(1, deck_size), np.int64),
        visits=np.zeros(2, np.int64), read_entry=np.zeros(1, np.int64),
    )


@njit_inline
def iteration_weight(params, t):
    """Weight of iteration ``t`` (0-based, cumulative over the run)."""
    if params.weight_mode == WEIGHT_STEPPED:
        s = t if t < params.weight_stop else params.weight_stop
        return np.float64(s // params.weight_interval + 1)
    return params.fixed_weight


@njit_inline
def add_strategy(write, off, num_actions, sigma, weight):
    """strategy_sum[off:off + n] += weight * sigma[:n]."""
    for a in range(num_actions):
        write.strategy_sum[off + a] += weight * sigma[a]


@njit_inline
def strategy_at(game, read, write, key, num_actions, sigma, is_delta, own_weight, read_entry):
    """Current strategy at infoset ``key`` into ``sigma``; returns (offset in ``write``, or -1
    when the store had no room for it; offset in ``read`` or -1).

    In a worker (``is_delta``) regret matching runs on shared regrets plus ``own_weight`` times
    this worker's own unmerged delta: it sees its own updates at once, and counting them W
    times stands in for the other workers' unfinished batches, which it cannot see (see
    :func:`holdem.runtime.worker.own_delta_weight`); the shared entry it finds is kept in
    ``read_entry`` at the delta row's offset (where that array reaches), for the split.
    In-process ``read`` is ``write``."""
    entry = nodes.find_infoset(game, write, key, num_actions)
    woff = store_kernels.entry_offset(entry) if entry >= 0 else -1
    roff = woff
    if is_delta:
        shared = store_kernels.find_entry(read, key)
        roff = store_kernels.entry_offset(shared) if shared >= 0 else -1
        if 0 <= woff < read_entry.shape[0]:
            read_entry[woff] = shared
    total = 0.0
    for a in range(num_actions):
        r = 0.0
        if woff >= 0:
            r = write.regrets[woff + a]
            if is_delta:
                r *= own_weight
        if is_delta and roff >= 0:
            r += read.regrets[roff + a]
        r = r if r > 0.0 else 0.0
        sigma[a] = r
        total += r
    normalize_positive(sigma, total, num_actions)
    return woff, roff


@njit_inline
def open_infoset(game, read, write, params, ws, d):
    """Enter the decision node at depth ``d``: count the visit (and, in ``ws.visits[1]``, an
    infoset the store had no room for) and put its current strategy in ``ws.sigma[d]``.
    Returns (player, street, num_actions, sigma, offset in ``write``, offset in ``read``), the
    offsets as :func:`strategy_at` gives them."""
    ws.visits[0] += 1
    p, street, na, key = nodes.open_node(game, ws, d)
    sigma = ws.sigma[d]
    woff, roff = strategy_at(game, read, write, key, na, sigma, params.is_delta,
                             params.own_weight, ws.read_entry)
    if woff < 0:
        ws.visits[1] += 1
    return p, street, na, sigma, woff, roff


@njit_inline
def prefetch_children(game, read, write, ws, d, na, is_delta):
    """Prefetch the hash slots of the traverser's explored children that are decision nodes,
    before it explores them depth first one after another; without this each child's lookup
    misses the cache in turn. Alternating runs with and without it in one process: +9-15%
    iterations/s in-process and +10-24% in a worker on hunl_default, +32% and +38% on
    hunl_blueprint, +9% on 6-max (where each child costs an extra ``apply_action``)."""
    for a in range(na):
        if ws.explored[d, a]:
            key = nodes.child_key(game, ws, d, a)
            if key >= 0:
                store_kernels.prefetch_lookups(read, write, key, is_delta)


@njit_inline
def close_node(write, ws, d, na, w, floor, is_delta):
    """Leave the traverser's node at depth ``d`` once its explored actions have values: return
    v = sum_a sigma(a) u(a) and add w * (u(a) - v) to each explored action's regret (floored
    in-process; no update when ``ws.offset[d]`` < 0, i.e. the infoset did not fit)."""
    v = 0.0
    for a in range(na):
        if ws.explored[d, a]:
            v += ws.sigma[d, a] * ws.util[d, a]
    off = ws.offset[d]
    if off >= 0:
        for a in range(na):
            if ws.explored[d, a]:
                r = write.regrets[off + a] + w * (ws.util[d, a] - v)
                if not is_delta and r < floor:
                    r = floor
                write.regrets[off + a] = r
    return v


@njit
def external_traverse(game, read, write, params, ws, traverser, w, prune, state, sw):
    """One external-sampling traversal of ``game`` (a :mod:`holdem.solver.game_nodes` game) for
    ``traverser``; returns its sampled value.

    With ``params.opp_exploration`` = e > 0 the other players *tremble*: their actions are
    drawn from (1 - e) sigma + e uniform instead of sigma, with no importance weight, so the
    traverser learns to answer lines the others' strategies rarely or never take (an
    e-perturbed game: a slightly different equilibrium, trained everywhere a deviation can
    lead). Weighting by sigma / q instead would leave every never-taken line with weight 0.

    ``sw``: the weight of this iteration's strategy updates (the other players' sigma, added
    to the strategy sums up to ``params.avg_max_street``): :func:`strategy_weight`."""
    d = 0
    nodes.start(game, ws)
    ws.next_action[0] = -1
    eps = params.opp_exploration
    floor = params.regret_floor * w if params.regret_floor > NO_FLOOR else NO_FLOOR
    threshold = params.prune_threshold * w
    ret = 0.0
    while True:
        if ws.next_action[d] < 0:
            if nodes.is_terminal(game, ws, d, traverser):
                ret = nodes.terminal_value(game, ws, d, traverser)
                d -= 1
                if d < 0:
                    return ret
                ws.util[d, ws.next_action[d] - 1] = ret
                continue
            p, street, na, sigma, woff, roff = open_infoset(game, read, write, params, ws, d)
            if p != traverser:
                if sw != 0.0 and woff >= 0 and street <= params.avg_max_street:
                    add_strategy(write, woff, na, sigma, sw)
                if eps > 0.0:
                    probs = ws.util[d]      # free: the node at depth d is not the traverser's
                    for a in range(na):
                        probs[a] = (1.0 - eps) * sigma[a] + eps / na
                    a = sample_action(probs, na, state)
                else:
                    a = sample_action(sigma, na, state)
                nodes.to_child(game, ws, d, a, d)
                continue
            ws.offset[d] = woff
            # Pluribus skips actions whose regret is below the threshold, except on the last
            # street and for actions that end the hand for the traverser. (In a worker the
            # shared regret decides: its own delta is small next to it.)
            check = prune and street != nodes.last_street(game) and roff >= 0
            for a in range(na):
                ws.explored[d, a] = not (check and read.regrets[roff + a] < threshold
                                         and nodes.child_key(game, ws, d, a) >= 0)
            prefetch_children(game, read, write, ws, d, na, params.is_delta)
            ws.next_action[d] = 0
        na = ws.num_actions[d]
        a = ws.next_action[d]
        while a < na and not ws.explored[d, a]:
            a += 1
        if a < na:
            ws.next_action[d] = a + 1
            nodes.to_child(game, ws, d, a, d + 1)
            d += 1
            ws.next_action[d] = -1
            continue
        ret = close_node(write, ws, d, na, w, floor, params.is_delta)
        d -= 1
        if d < 0:
            return ret
        ws.util[d, ws.next_action[d] - 1] = ret


@njit
def outcome_traverse(game, read, write, params, ws, traverser, w, state, sw):
    """One outcome-sampling traversal for ``traverser``; returns its importance-weighted value."""
    num_players = ws.strength.shape[0]
    avg_player = (traverser + 1) % num_players
    eps = params.exploration
    floor = params.regret_floor * w if params.regret_floor > NO_FLOOR else NO_FLOOR
    d = 0
    nodes.start(game, ws)
    opp_reach = 1.0
    sample_reach = 1.0
    while not nodes.is_terminal(game, ws, d, traverser):
        p, street, na, sigma, woff, roff = open_infoset(game, read, write, params, ws, d)
        if p == traverser:
            ws.offset[d] = woff
            probs = ws.util[d]
            for a in range(na):
                probs[a] = (1.0 - eps) * sigma[a] + eps / na
            a = sample_action(probs, na, state)
            q = probs[a]
        else:
            if sw != 0.0 and p == avg_player and woff >= 0 and street <= params.avg_max_street:
                add_strategy(write, woff, na, sigma, sw * opp_reach / sample_reach)
            a = sample_action(sigma, na, state)
            q = sigma[a]
        ws.player[d] = p
        ws.action[d] = a
        ws.sample_prob[d] = q
        ws.opp_reach[d] = opp_reach
        ws.sample_reach[d] = sample_reach
        if p != traverser:
            opp_reach *= sigma[a]
        sample_reach *= q
        nodes.to_child(game, ws, d, a, d + 1)
        d += 1
    value = nodes.terminal_value(game, ws, d, traverser)
    for i in range(d - 1, -1, -1):
        a_star = ws.action[i]
        child = value / ws.sample_prob[i]
        value = ws.sigma[i, a_star] * child
        off = ws.offset[i]
        if ws.player[i] == traverser and off >= 0:
            scale = w * ws.opp_reach[i] / ws.sample_reach[i]
            for a in range(ws.num_actions[i]):
                cf = child if a == a_star else 0.0
                r = write.regrets[off + a] + scale * (cf - value)
                if not params.is_delta and r < floor:
                    r = floor
                write.regrets[off + a] = r
    return value


def outcome_sampling(game, read, write, params, ws, traverser, w, state, sw):
    """:func:`outcome_traverse` for games that take it. A game registered with
    ``outcome_sampling=False`` (the multi-way game: its config is rejected otherwise) gets NaN
    instead of compiling an outcome traversal nobody runs (7 s more first-call compile time on
    6-max)."""


@overload_inline(outcome_sampling, strict=False)
def _outcome_sampling(game, *args):
    if nodes.supports_outcome_sampling(game):
        def impl(game, read, write, params, ws, traverser, w, state, sw):
            return outcome_traverse(game, read, write, params, ws, traverser, w, state, sw)
    else:
        def impl(game, read, write, params, ws, traverser, w, state, sw):
            return np.nan
    return impl


@njit_inline
def begin_iteration(deal, write, params, ws, state, t):
    """Start global iteration ``t``: the DCFR sweep due before it (in-process), its weight, the
    deal (into ``ws``) and whether it prunes. Returns (weight, prune)."""
    if (params.dcfr_interval > 0 and not params.is_delta and t > 0
            and t % params.dcfr_interval == 0 and t <= params.dcfr_stop):
        discount_step(write, t // params.dcfr_interval, params.dcfr_alpha,
                      params.dcfr_beta, params.dcfr_gamma)
    w = iteration_weight(params, t)
    deal_kernels.deal(deal, state, ws.deck, ws.buckets, ws.strength)
    prune = t >= params.prune_start and rng.uniform(state) < params.prune_prob
    return w, prune


@njit_inline
def strategy_weight(params, t, w):
    """The weight of iteration ``t``'s strategy updates (its regret weight ``w``): with
    ``params.strategy_interval`` = k, only every k-th iteration (t = 0, k, 2k, ..) adds to the
    strategy sums, k times as heavily, so that they stay an unbiased sum over every iteration;
    the others add nothing (0). Regrets never read the strategy sums, so they are the same for
    any k. (Pluribus updated its average strategy every 10,000 iterations.) Fewer strategy
    updates make fewer rows for the main process to merge: at k = 10 a 50-iteration record of
    ``hunl_default`` carries 298 strategy rows instead of 895, of ``hunl_blueprint`` 930
    instead of 8,406; but in the lag simulator parallel blueprints lost clearly more against
    in-process ones at k = 10 than at 1, so the shipped configs keep 1 (docs/parallel.md)."""
    k = params.strategy_interval
    if k <= 1:
        return w
    return w * k if t % k == 0 else 0.0


@njit
def run_iterations(game, deal, read, write, params, ws, state, t0, n, max_new_rows,
                   max_new_entries, utility_out):
    """Run up to ``n`` iterations of ``game`` (a :mod:`holdem.solver.game_nodes` game) starting
    at global iteration ``t0``.

    Stops early, at an iteration boundary, when ``write`` may not hold another iteration's new
    infosets (the caller grows it and calls again). Player 0's sampled value of iteration i is
    written to ``utility_out[i]``. Returns the number of iterations run.
    """
    num_players = ws.strength.shape[0]
    for i in range(n):
        if not store_kernels.has_headroom(write, max_new_rows, max_new_entries):
            return i
        w, prune = begin_iteration(deal, write, params, ws, state, t0 + i)
        sw = strategy_weight(params, t0 + i, w)
        for traverser in range(num_players):
            if params.sampling == SAMPLING_EXTERNAL:
                v = external_traverse(game, read, write, params, ws, traverser, w, prune, state,
                                      sw)
            else:
                v = outcome_sampling(game, read, write, params, ws, traverser, w, state, sw)
            if traverser == 0:
                utility_out[i] = v
    return n


@njit
def discount_step(store, step, alpha, beta, gamma):
    """DCFR discount number ``step`` (1-based): Brown & Sandholm 2019, eq. 2, with t = step."""
    t = np.float64(step)
    ta = t ** alpha
    tb = t ** beta
    discount_sweep(store, ta / (ta + 1.0), tb / (tb + 1.0), (t / (t + 1.0)) ** gamma)


@njit
def discount_sweep(store, positive_factor, negative_factor, strategy_factor):
    """DCFR discount over the whole store (Brown & Sandholm 2019, eq. 2): positive regrets times
    ``positive_factor``, negative ones times ``negative_factor``, strategy sums times
    ``strategy_factor``. O(entries); the solver calls it once per discount interval."""
    e = store.meta[1]
    for i in range(e):
        r = store.regrets[i]
        store.regrets[i] = r * (positive_factor if r > 0.0 else negative_factor)
        store.strategy_sum[i] *= strategy_factor
