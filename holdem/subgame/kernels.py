"""Kernels of the subgame solver: one traversal of the betting tree with a vector per hand.

Every node carries a value per hand of the *traverser*, computed from the other player's reach
per hand (counterfactual values, the vector form of CFR that postflop solvers use). A traversal
is a depth-first walk with an explicit stack (no recursion, so numba's cache is safe); row ``d``
of the work arrays belongs to the frame at depth ``d``:

- ``reach[row, p, h]``: player p's reach with hand h. A child shares its parent's row when its
  edge leaves a player's reach as it was (:data:`Work` ``.row`` says which row a depth reads),
  so an edge costs one vector product, not two copies.
- ``cfv[d, h]``: the frame's value per traverser hand; ``act[d, a, h]`` the traverser's values
  per action; ``strat[d, a, h]`` the strategy of the player to act.

Modes: CFR (regret matching, discounted CFR updates of the traverser's regrets and strategy sums:
Brown & Sandholm 2019, alpha 1.5, beta 0, gamma 2), BEST_RESPONSE (the traverser takes its best
action per hand against the other player's average strategy; no update) and AVERAGE (both
play the average strategy; no update).

Terminals cost O(hands): a fold pays the folder's stake times the reach of the opponent hands
that share no card with h (the total, minus the hands holding either card, plus the hand
holding both: inclusion-exclusion over 52 per-card sums); a showdown sweeps both players' hands
in the order of their strength on that board, keeping the reach of the hands below (and per
card) as it goes. Payoffs are zero-sum: each player stakes half the root's pot plus what it put
in since.

Turn subgames: the river card is a CHANCE node. A traversal then runs in three passes so that
the river subtrees (one per chance node and card: a *segment*) can run on several threads:
the turn part forward (record the reach arriving at each chance node), every segment (its
root's values, cards of the river zeroed), and the turn part again, reading a chance node's
value as the sum of its segments' over the number of river cards two hands leave (44).
"""

from collections import namedtuple


from holdem._jit import njit, njit_inline

DECISION, CHANCE, FOLD, SHOWDOWN = 0, 1, 2, 3
CFR, BEST_RESPONSE, AVERAGE = 0, 1, 2
CHANCE_RECORD, CHANCE_READ = 0, 1

Tree = namedtuple("Tree", [
    "kind", "player", "invest", "board", "first_child", "num_children", "offset",
    "chance_id", "half_pot"])
"""Node arrays (see :mod:`holdem.subgame.tree`); ``offset`` into the regret arrays;
``chance_id`` of a CHANCE node (-1 else); ``half_pot``: each player's stake at the root."""

Hands = namedtuple("Hands", ["num", "cards", "same"])
"""``num[p]`` hands of player p; ``cards[p, h, 2]``; ``same[p, h]``: the other player's index
of the same combo (-1: it has none)."""

Boards = namedtuple("Boards", ["count", "order", "c0", "c1", "lo", "hi", "end"])
"""Per board (0 = root, 1 + k = turn board + river card k) and player p, by position i in
strength order (weakest first) of the hands holding no board card (``count[p, b]``):
``order`` the hand, ``c0``/``c1`` its cards, ``lo``/``hi`` how many of the other player's
hands are weaker / not stronger, ``end`` the position after its group of equal strength."""

Store = namedtuple("Store", ["regrets", "strategy_sum"])

Work = namedtuple("Work", ["reach", "row", "cfv", "act", "strat", "node", "next",
                           "card_sum", "tmp"])
"""One thread's scratch: reach[D, 2, H], row[D, 2], cfv[D, H], act[D, A, H], strat[D, A, H],
node[D], next[D], card_sum[52], tmp[H]."""

Chance = namedtuple("Chance", ["reach", "cfv", "cards", "inv_cards"])
"""Between the passes of a turn traversal: reach[C, 2, H] arriving at each chance node,
cfv[S, H] of each segment's root, ``cards[k]`` the river cards, ``inv_cards`` 1 / 44."""


@njit
def _copy(dst, src, n):
    for h in range(n):
        dst[h] = src[h]


@njit
def _normalized(values, off, num_actions, n, out, tmp, positive):
    """out[a, h] = values[a, h] / sum over a, per hand (uniform where the sum is 0). With
    ``positive`` the negative values count as 0: regret matching. Without: the average
    strategy from the strategy sums."""
    for h in range(n):
        tmp[h] = 0.0
    for a in range(num_actions):
        base = off + a * n
        for h in range(n):
            v = values[base + h]
            tmp[h] += v if v > 0 or not positive else 0.0
    uniform = 1.0 / num_actions
    for h in range(n):
        tmp[h] = 1.0 / tmp[h] if tmp[h] > 0 else 0.0
    for a in range(num_actions):
        base = off + a * n
        for h in range(n):
            v = values[base + h]
            if positive and v < 0:
                v = 0.0
            out[a, h] = v * tmp[h] if tmp[h] > 0 else uniform


@njit
def _fold_values(hands, trav, opp_reach, amount, work, out):
    """out[h] = amount x the opponent's reach over hands disjoint from h."""
    opp = 1 - trav
    cs = work.card_sum
    cs[:] = 0.0
    total = 0.0
    cards_o = hands.cards[opp]
    for h in range(hands.num[opp]):
        r = opp_reach[h]
        total += r
        cs[cards_o[h, 0]] += r
        cs[cards_o[h, 1]] += r
    cards_t = hands.cards[trav]
    same = hands.same[trav]
    for h in range(hands.num[trav]):
        s = total - cs[cards_t[h, 0]] - cs[cards_t[h, 1]]
        j = same[h]
        if j >= 0:
            s += opp_reach[j]
        out[h] = amount * s


@njit_inline
def _take_below(opp_reach, order_o, c0_o, c1_o, card_sum, j, target, cum):
    """Add the opponent's hands at positions j..target-1 (strength order) to the running
    total and the per-card sums; returns (target, the new total)."""
    while j < target:
        r = opp_reach[order_o[j]]
        cum += r
        card_sum[c0_o[j]] += r
        card_sum[c1_o[j]] += r
        j += 1
    return j, cum


@njit
def _showdown_values(hands, boards, board, trav, opp_reach, amount, work, out):
    """out[h] = amount x (reach of disjoint opponent hands that h beats - that beat h).

    One sweep up the opponent's hands in strength order, stopping at each group of traverser
    hands of equal strength twice: below it (``lo``) and below or level with it (``hi``).
    below + level-or-below - all (each net of the hands sharing a card) = wins - losses; the
    hand holding both cards counts in the last two and cancels."""
    opp = 1 - trav
    nt, no = boards.count[trav, board], boards.count[opp, board]
    order, c0, c1 = boards.order[trav, board], boards.c0[trav, board], boards.c1[trav, board]
    lo, hi, end = boards.lo[trav, board], boards.hi[trav, board], boards.end[trav, board]
    order_o, c0_o, c1_o = boards.order[opp, board], boards.c0[opp, board], boards.c1[opp, board]
    for h in range(hands.num[trav]):
        out[h] = 0.0
    cs = work.card_sum
    cs[:] = 0.0
    cum = 0.0
    j = 0
    i = 0
    while i < nt:
        stop = end[i]
        for _ in range(2):
            target = lo[i] if _ == 0 else hi[i]
            j, cum = _take_below(opp_reach, order_o, c0_o, c1_o, cs, j, target, cum)
            for k in range(i, stop):
                out[order[k]] += cum - cs[c0[k]] - cs[c1[k]]
        i = stop
    j, cum = _take_below(opp_reach, order_o, c0_o, c1_o, cs, j, no, cum)
    for k in range(nt):
        h = order[k]
        out[h] = amount * (out[h] - (cum - cs[c0[k]] - cs[c1[k]]))


@njit
def _terminal(tree, hands, boards, n, trav, opp_reach, work, d):
    out = work.cfv[d]
    kind = tree.kind[n]
    if kind == FOLD:
        folder = tree.player[n]
        amount = tree.half_pot + tree.invest[n, folder]
        _fold_values(hands, trav, opp_reach, amount if folder != trav else -amount, work, out)
    else:
        _showdown_values(hands, boards, tree.board[n], trav, opp_reach,
                         tree.half_pot + tree.invest[n, 0], work, out)


@njit
def traverse(tree, hands, boards, store, work, chance, root, trav, mode, chance_mode,
             forward_only, t):
    """One depth-first traversal from ``root`` for traverser ``trav``; the root's reach is in
    ``work.reach[0]`` (rows [0, 0] set by the caller) and its values end in ``work.cfv[0]``.
    CHANCE nodes are leaves here (see the module docstring): ``chance_mode`` CHANCE_RECORD
    stores the reach arriving there, CHANCE_READ reads their values. ``forward_only`` skips
    terminal values and updates (the recording pass). ``t`` is the iteration (1-based) whose
    discounts CFR applies."""
    opp = 1 - trav
    nt, no = hands.num[trav], hands.num[opp]
    tf = float(t - 1)
    pos_discount = tf ** 1.5 / (tf ** 1.5 + 1.0)
    neg_discount = 0.5
    strat_discount = (tf / (tf + 1.0)) ** 2
    reach, row, cfv, act, strat = work.reach, work.row, work.cfv, work.act, work.strat
    d = 0
    work.node[0] = root
    work.next[0] = -1
    row[0, 0] = 0
    row[0, 1] = 0
    while True:
        n = work.node[d]
        kind = tree.kind[n]
        done = False
        if work.next[d] == -1:
            if kind == FOLD or kind == SHOWDOWN:
                if forward_only:
                    cfv[d, :nt] = 0.0
                else:
                    _terminal(tree, hands, boards, n, trav, reach[row[d, opp], opp], work, d)
                done = True
            elif kind == CHANCE:
                c = tree.chance_id[n]
                if chance_mode == CHANCE_RECORD:
                    _copy(chance.reach[c, trav], reach[row[d, trav], trav], nt)
                    _copy(chance.reach[c, opp], reach[row[d, opp], opp], no)
                    cfv[d, :nt] = 0.0
                else:
                    num_cards = chance.cards.shape[0]
                    cfv[d, :nt] = 0.0
                    for k in range(num_cards):
                        src = chance.cfv[c * num_cards + k]
                        for h in range(nt):
                            cfv[d, h] += src[h]
                    for h in range(nt):
                        cfv[d, h] *= chance.inv_cards
                done = True
            else:
                q = tree.player[n]
                na = tree.num_children[n]
                nq = hands.num[q]
                if mode == CFR:
                    _normalized(store.regrets, tree.offset[n], na, nq, strat[d], work.tmp, True)
                elif mode == AVERAGE or q == opp:
                    _normalized(store.strategy_sum, tree.offset[n], na, nq, strat[d], work.tmp,
                                False)
                work.next[d] = 0
        if not done:
            a = work.next[d]
            na = tree.num_children[n]
            if a < na:
                q = tree.player[n]
                child = tree.first_child[n] + a
                row[d + 1, 0] = row[d, 0]
                row[d + 1, 1] = row[d, 1]
                if q == opp or mode == CFR:
                    src = reach[row[d, q], q]
                    dst = reach[d + 1, q]
                    s = strat[d, a]
                    for h in range(hands.num[q]):
                        dst[h] = src[h] * s[h]
                    row[d + 1, q] = d + 1
                d += 1
                work.node[d] = child
                work.next[d] = -1
                continue
            # every child is back: the decision's value (and the traverser's updates)
            q = tree.player[n]
            if q == trav and not forward_only:
                out = cfv[d]
                if mode == BEST_RESPONSE:
                    _copy(out, act[d, 0], nt)
                    for b in range(1, na):
                        src = act[d, b]
                        for h in range(nt):
                            out[h] = max(out[h], src[h])
                else:
                    for h in range(nt):
                        out[h] = 0.0
                    for b in range(na):
                        s, v = strat[d, b], act[d, b]
                        for h in range(nt):
                            out[h] += s[h] * v[h]
                if mode == CFR:
                    off = tree.offset[n]
                    my_reach = reach[row[d, trav], trav]
                    regrets, ssum = store.regrets, store.strategy_sum
                    for b in range(na):
                        base = off + b * nt
                        s, v = strat[d, b], act[d, b]
                        for h in range(nt):
                            r = regrets[base + h]
                            r *= pos_discount if r > 0 else neg_discount
                            regrets[base + h] = r + v[h] - out[h]
                            ssum[base + h] = ssum[base + h] * strat_discount + my_reach[h] * s[h]
            elif q == trav:
                cfv[d, :nt] = 0.0
        # the frame at depth d is done: hand its values to the parent
        if d == 0:
            return
        d -= 1
        p = work.node[d]
        a = work.next[d]
        if tree.player[p] == trav:
            _copy(act[d, a], cfv[d + 1], nt)
        elif a == 0:
            _copy(cfv[d], cfv[d + 1], nt)
        else:
            for h in range(nt):
                cfv[d, h] += cfv[d + 1, h]
        work.next[d] = a + 1


@njit
def traverse_segments(tree, hands, boards, store, work, chance, roots, first, step, trav,
                      mode, t):
    """The river subtrees ``roots[first::step]`` (pass two of a turn traversal): each starts
    from the reach its chance node recorded, with the hands holding its card out, and leaves
    its root's values in ``chance.cfv[segment]`` (those hands' values 0)."""
    num_cards = chance.cards.shape[0]
    for s in range(first, roots.shape[0], step):
        c, k = s // num_cards, s % num_cards
        card = chance.cards[k]
        for p in range(2):
            src = chance.reach[c, p]
            dst = work.reach[0, p]
            cards = hands.cards[p]
            for h in range(hands.num[p]):
                held = cards[h, 0] == card or cards[h, 1] == card
                dst[h] = 0.0 if held else src[h]
        traverse(tree, hands, boards, store, work, chance, roots[s], trav, mode, CHANCE_READ,
                 False, t)
        out = chance.cfv[s]
        cards = hands.cards[trav]
        for h in range(hands.num[trav]):
            held = cards[h, 0] == card or cards[h, 1] == card
            out[h] = 0.0 if held else work.cfv[0, h]
