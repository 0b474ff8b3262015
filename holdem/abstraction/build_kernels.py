"""Card-abstraction kernels of the bucket builder: canonical-board census and hand-strength sweeps.

Everything here is @njit, iterative and allocation-free (``_nrt=False``): callers pass every
scratch array in. The Python side (:mod:`holdem.abstraction.bucket_build`) allocates, validates
and owns the loops; the hand isomorphism index these kernels call, and the run-time lookup, are
in :mod:`holdem.abstraction.deal_kernels`.

Hand strength (HS) on the river
    ``score = 2 * wins + ties`` against all C(45, 2) = 990 opponent hole pairs that share no card
    with the hand or the board (``HS = score / 1980``). The builder ranks all 1,081 pairs of the
    47 unseen cards, radix-sorts them and sweeps once to get every pair's score in O(pairs) (the
    card-removal correction keeps per-card counts, as in postflop-solver's showdown evaluation).
"""

import numpy as np

from holdem import rng
from holdem._jit import njit_exact, njit_inline
from holdem.abstraction.deal_kernels import hand_index_kernel
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel

NUM_PAIRS_47 = 1081            # C(47, 2): hole pairs from the cards not on a 5-card board
NUM_PAIRS_48 = 1128            # C(48, 2)

# Scratch layout of the river sweep over a turn board (:func:`turn_pass_kernel`,
# :func:`holdem.abstraction.emd_kernels.turn_hist_kernel`): offsets into one int64 ``iwork``,
# cut into views by :func:`river_scratch`. Every view is written before it is read.
_CARDS48 = 0                            # the 48 cards not on the turn board
_CARDS47 = _CARDS48 + 48                # the 47 left once a river card is drawn
_PAIR_A = _CARDS47 + 47                 # positions in cards47 of every hole pair (first card)
_PAIR_B = _PAIR_A + NUM_PAIRS_47        # (second card)
_KEYS = _PAIR_B + NUM_PAIRS_47          # radix sort: keys
_TMP = _KEYS + NUM_PAIRS_47             # radix sort: the other buffer
_SCORES = _TMP + NUM_PAIRS_47           # each pair's river score
_COUNT = _SCORES + NUM_PAIRS_47         # radix sort: digit counts (10 bits)
_LESS = _COUNT + 1024                   # per card: pairs of lower rank holding it
_EQUAL = _LESS + 47                     # per card: pairs of equal rank holding it
_PERM = _EQUAL + 47                     # river cards drawn (positions in cards48)
_ACC_COUNT = _PERM + 48                 # per pair of cards48: rivers counted
_PAIR48 = _ACC_COUNT + NUM_PAIRS_48     # per pair of cards47: its pair index in cards48
_HAND = _PAIR48 + NUM_PAIRS_47          # per pair of cards48: its turn-hand index
RIVER_IWORK = _HAND + NUM_PAIRS_48
"""Size of the int64 scratch ``iwork`` of the river sweep."""
RIVER_FWORK = NUM_PAIRS_48
"""Size of the float64 scratch ``fwork`` of :func:`turn_pass_kernel` (per pair of cards48)."""

# Scratch layout of the turn sweep over a flop (:func:`flop_pass_kernel`,
# :func:`holdem.abstraction.emd_kernels.flop_hist_kernel`), cut by :func:`flop_scratch`.
_CARDS49 = 0                            # the 49 cards not on the flop
_TURN_PERM = _CARDS49 + 49              # turn cards drawn (positions in cards49)
FLOP_IWORK = _TURN_PERM + 49
"""Size of the int64 scratch ``iwork`` of the turn sweep."""


# --------------------------------------------------------------------------------------------
# Census: every raw hand or board once
# --------------------------------------------------------------------------------------------

@njit_exact
def board_census_kernel(radix, offset, code_mult, num_cards, reps, counts):
    """Canonical boards of ``num_cards`` (3 or 4) cards with the one-round board indexer
    (``radix`` etc.): ``counts[index]`` += 1 for every raw board and ``reps[index]`` (m, 4)
    int64 = the first raw board met (cards ascending; -1 pads a flop), in place. ``counts``
    must start at zero."""
    for f0 in range(52):
        for f1 in range(f0 + 1, 52):
            for f2 in range(f1 + 1, 52):
                kf = CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2]
                for t in range(f2 + 1 if num_cards == 4 else -1, 52 if num_cards == 4 else 0):
                    key = kf | CARD_BITS[t] if t >= 0 else kf
                    idx = hand_index_kernel(radix, offset, code_mult, key, 0, 0, 0)
                    if counts[idx] == 0:
                        reps[idx, 0] = f0
                        reps[idx, 1] = f1
                        reps[idx, 2] = f2
                        reps[idx, 3] = t
                    counts[idx] += 1


# --------------------------------------------------------------------------------------------
# River hand strength
# --------------------------------------------------------------------------------------------

@njit_inline
def _splitmix(x):
    return rng.mix64(x + rng.GOLDEN)


@njit_inline
def _seed_state(state, seed, stream):
    """Fill the xoshiro state (uint64[4]) from (seed, stream): independent of thread order."""
    x = _splitmix(np.uint64(seed) * np.uint64(0x100000001B3) + np.uint64(stream))
    for i in range(4):
        x = _splitmix(x)
        state[i] = x
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = np.uint64(1)


@njit_inline
def _choose_first(perm, n, m, state):
    """Shuffle so ``perm[:m]`` is a uniform m-subset of ``perm[:n]`` (partial Fisher-Yates);
    with m >= n the order is kept."""
    if m >= n:
        return n
    for i in range(m):
        j = i + rng.below(state, n - i)
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp
    return m


@njit_inline
def _radix_pass(src, dst, count, shift, n):
    for d in range(count.shape[0]):
        count[d] = 0
    for i in range(n):
        count[(src[i] >> shift) & 1023] += 1
    total = np.int64(0)
    for d in range(count.shape[0]):
        c = count[d]
        count[d] = total
        total += c
    for i in range(n):
        d = (src[i] >> shift) & 1023
        dst[count[d]] = src[i]
        count[d] += 1


@njit_exact
def river_scores_kernel(board_key, cards, pair_a, pair_b, keys, tmp, count, less, equal,
                        scores):
    """Scores (2 * wins + ties vs every disjoint pair) of every pair of the 47 ``cards`` not on
    the river board ``board_key``. Pairs are ``(cards[pair_a[i]], cards[pair_b[i]])`` for i <
    1081; ``scores`` (1081,) int64 is written; ``keys``/``tmp`` (1081,), ``count`` (1024,),
    ``less``/``equal`` (47,) int64 are scratch. Rank keys are radix-sorted (3 passes of 10
    bits), then one sweep over equal-rank groups removes the pairs sharing a card."""
    n = NUM_PAIRS_47
    for i in range(n):
        rank = rank_key_kernel(board_key | CARD_BITS[cards[pair_a[i]]]
                               | CARD_BITS[cards[pair_b[i]]])
        keys[i] = (rank << 11) | i
    _radix_pass(keys, tmp, count, 11, n)
    _radix_pass(tmp, keys, count, 21, n)
    _radix_pass(keys, tmp, count, 31, n)
    for c in range(47):
        less[c] = 0
        equal[c] = 0
    below = np.int64(0)
    i = 0
    while i < n:
        rank = tmp[i] >> 11
        j = i
        while j < n and (tmp[j] >> 11) == rank:
            p = tmp[j] & 2047
            equal[pair_a[p]] += 1
            equal[pair_b[p]] += 1
            j += 1
        group = j - i
        for q in range(i, j):
            p = tmp[q] & 2047
            a = pair_a[p]
            b = pair_b[p]
            scores[p] = (2 * (below - less[a] - less[b])
                         + (group - equal[a] - equal[b] + 1))
        for q in range(i, j):
            p = tmp[q] & 2047
            a = pair_a[p]
            b = pair_b[p]
            less[a] += 1
            less[b] += 1
            equal[a] = 0
            equal[b] = 0
        below += group
        i = j


@njit_exact
def fill_pairs_kernel(n, pair_a, pair_b):
    """Pairs (a < b) of positions 0..n-1 in lexicographic order into ``pair_a``/``pair_b``."""
    k = 0
    for a in range(n):
        for b in range(a + 1, n):
            pair_a[k] = a
            pair_b[k] = b
            k += 1
    return k


@njit_inline
def _pair_index(a, b, n):
    """Lexicographic index of the pair (a < b) of positions 0..n-1."""
    return a * (2 * n - a - 1) // 2 + (b - a - 1)


@njit_inline
def river_scratch(iwork):
    """The views of the river sweep's scratch ``iwork`` (int64[RIVER_IWORK]): (cards48, cards47,
    pair_a, pair_b, keys, tmp, scores, count, less, equal, perm, acc_count, pair48, hand)."""
    return (iwork[_CARDS48:_CARDS48 + 48], iwork[_CARDS47:_CARDS47 + 47],
            iwork[_PAIR_A:_PAIR_A + NUM_PAIRS_47], iwork[_PAIR_B:_PAIR_B + NUM_PAIRS_47],
            iwork[_KEYS:_KEYS + NUM_PAIRS_47], iwork[_TMP:_TMP + NUM_PAIRS_47],
            iwork[_SCORES:_SCORES + NUM_PAIRS_47], iwork[_COUNT:_COUNT + 1024],
            iwork[_LESS:_LESS + 47], iwork[_EQUAL:_EQUAL + 47], iwork[_PERM:_PERM + 48],
            iwork[_ACC_COUNT:_ACC_COUNT + NUM_PAIRS_48], iwork[_PAIR48:_PAIR48 + NUM_PAIRS_47],
            iwork[_HAND:_HAND + NUM_PAIRS_48])


@njit_inline
def flop_scratch(iwork):
    """The views of the turn sweep's scratch ``iwork`` (int64[FLOP_IWORK]): (cards49, perm)."""
    return iwork[_CARDS49:_CARDS49 + 49], iwork[_TURN_PERM:_TURN_PERM + 49]


@njit_inline
def turn_river_cards(reps, rep, river_samples, seed, cards48, perm, state):
    """The canonical turn board ``reps[rep]``'s 48 unseen cards into ``cards48`` and its river
    cards into ``perm[:m]`` (positions in ``cards48``: all 48, or the seeded subset of
    ``river_samples`` that every turn pass of this board uses); returns (board key, m)."""
    f0 = reps[rep, 0]
    f1 = reps[rep, 1]
    f2 = reps[rep, 2]
    t = reps[rep, 3]
    n = 0
    for c in range(52):
        if c != f0 and c != f1 and c != f2 and c != t:
            cards48[n] = c
            n += 1
    for j in range(48):
        perm[j] = j
    _seed_state(state, seed, rep)
    m = _choose_first(perm, 48, river_samples, state)
    return CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2] | CARD_BITS[t], m


@njit_inline
def turn_hands(radix, offset, code_mult, board_key, iwork):
    """The turn-hand index of every pair of ``cards48`` on the turn board ``board_key`` into
    ``hand`` (views of the sweep's ``iwork``, :func:`river_scratch`)."""
    cards48, _, _, _, _, _, _, _, _, _, _, _, _, hand = river_scratch(iwork)
    q = 0
    for a in range(48):
        ka = CARD_BITS[cards48[a]]
        for b in range(a + 1, 48):
            hand[q] = hand_index_kernel(radix, offset, code_mult, ka | CARD_BITS[cards48[b]],
                                        board_key, 0, 0)
            q += 1


@njit_inline
def river_draw(iwork, board_key, jr):
    """Draw the river ``cards48[jr]`` onto the turn board ``board_key``: the 47 cards left into
    ``cards47``, every hole pair's score into ``scores`` and its pair index in ``cards48`` into
    ``pair48`` (views of the sweep's ``iwork``, :func:`river_scratch`)."""
    (cards48, cards47, pair_a, pair_b, keys, tmp, scores, count, less, equal, _, _, pair48,
     _) = river_scratch(iwork)
    for c in range(47):
        cards47[c] = cards48[c + (c >= jr)]
    river_scores_kernel(board_key | CARD_BITS[cards48[jr]], cards47, pair_a, pair_b, keys, tmp,
                        count, less, equal, scores)
    for p in range(NUM_PAIRS_47):
        a = pair_a[p]
        b = pair_b[p]
        pair48[p] = _pair_index(a + (a >= jr), b + (b >= jr), 48)


@njit_inline
def _power(x, e):
    result = 1.0
    for _ in range(e):
        result *= x
    return result


@njit_exact
def turn_pass_kernel(reps, weights, start, stop, radix, offset, code_mult, exponent,
                     river_samples, seed, turn_feature, turn_weight, river_hist, iwork, fwork,
                     state):
    """E[HS^(2 * exponent)] of every hole pair on the canonical turn boards ``reps[start:stop]``
    (4 cards each; ``weights`` = raw boards per class) over ``river_samples`` river cards
    (48 = all, exact; fewer = a seeded random subset per board). Writes
    ``turn_feature[index]`` (float64, the feature times 1980**(2*exponent)), adds the board's
    weight to ``turn_weight[index]`` for every hole pair and to ``river_hist[score]`` for every
    (river, pair). ``iwork`` int64[RIVER_IWORK], ``fwork`` float64[RIVER_FWORK] and
    ``state`` uint64[4] are scratch."""
    (cards48, _, pair_a, pair_b, _, _, scores, _, _, _, perm, acc_count, pair48,
     hand) = river_scratch(iwork)
    acc_sum = fwork[0:RIVER_FWORK]
    fill_pairs_kernel(47, pair_a, pair_b)
    for rep in range(start, stop):
        w = weights[rep]
        kb, m = turn_river_cards(reps, rep, river_samples, seed, cards48, perm, state)
        for p in range(NUM_PAIRS_48):
            acc_sum[p] = 0.0
            acc_count[p] = 0
        for s in range(m):
            river_draw(iwork, kb, perm[s])
            for p in range(NUM_PAIRS_47):
                sc = scores[p]
                q = pair48[p]
                acc_sum[q] += _power(np.float64(sc * sc), exponent)
                acc_count[q] += 1
                river_hist[sc] += w
        turn_hands(radix, offset, code_mult, kb, iwork)
        for q in range(NUM_PAIRS_48):
            idx = hand[q]
            turn_feature[idx] = acc_sum[q] / acc_count[q]
            turn_weight[idx] += w


@njit_inline
def flop_turn_cards(reps, rep, turn_samples, seed, cards49, perm, state):
    """The canonical flop ``reps[rep]``'s 49 unseen cards into ``cards49`` and its turn cards
    into ``perm[:m]`` (positions in ``cards49``: all 49, or the seeded subset of
    ``turn_samples`` that every flop pass of this flop uses); returns (flop key, m)."""
    f0 = reps[rep, 0]
    f1 = reps[rep, 1]
    f2 = reps[rep, 2]
    n = 0
    for c in range(52):
        if c != f0 and c != f1 and c != f2:
            cards49[n] = c
            n += 1
    for j in range(49):
        perm[j] = j
    _seed_state(state, seed, np.int64(1) << 32 | rep)
    m = _choose_first(perm, 49, turn_samples, state)
    return CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2], m


@njit_exact
def flop_pass_kernel(reps, weights, start, stop, flop_radix, flop_offset, flop_code_mult,
                     turn_radix, turn_offset, turn_code_mult, turn_feature, turn_samples, seed,
                     flop_feature, flop_weight, iwork, state):
    """Flop feature of every hole pair on the canonical flops ``reps[start:stop]``: the mean of
    ``turn_feature`` over ``turn_samples`` turn cards (47 = all, exact; fewer = a seeded random
    subset per flop, at least 3 so every pair keeps one). Writes ``flop_feature[index]`` and adds
    the flop's weight to ``flop_weight[index]``. ``iwork`` int64[FLOP_IWORK] and ``state``
    uint64[4] are scratch."""
    cards49, perm = flop_scratch(iwork)
    for rep in range(start, stop):
        w = weights[rep]
        kf, m = flop_turn_cards(reps, rep, turn_samples, seed, cards49, perm, state)
        for a in range(49):
            for b in range(a + 1, 49):
                kh = CARD_BITS[cards49[a]] | CARD_BITS[cards49[b]]
                total = 0.0
                num = 0
                for s in range(m):
                    jt = perm[s]
                    if jt == a or jt == b:
                        continue
                    idx = hand_index_kernel(turn_radix, turn_offset, turn_code_mult, kh,
                                            kf | CARD_BITS[cards49[jt]], 0, 0)
                    total += turn_feature[idx]
                    num += 1
                idx = hand_index_kernel(flop_radix, flop_offset, flop_code_mult, kh, kf, 0, 0)
                flop_feature[idx] = total / num
                flop_weight[idx] += w


@njit_exact
def preflop_equity_kernel(holes, start, stop, num_players, samples, seed, equity, deck, state):
    """Monte Carlo pot share of the hole pairs ``holes[start:stop]`` ((n, 2) ints) against
    ``num_players - 1`` uniformly random opponents and a random board: win 1, an m-way tie 1/m.
    Writes ``equity[i]`` (float64) for i in start..stop-1; ``deck`` int64[52] and ``state``
    uint64[4] are scratch. Row i draws from its own stream (seed, i)."""
    draw = 5 + 2 * (num_players - 1)
    for i in range(start, stop):
        h0 = holes[i, 0]
        h1 = holes[i, 1]
        _seed_state(state, seed, (np.int64(2) << 32) | i)
        n = 0
        for c in range(52):
            if c != h0 and c != h1:
                deck[n] = c
                n += 1
        total = 0.0
        for _ in range(samples):
            for j in range(draw):
                k = j + rng.below(state, 50 - j)
                tmp = deck[j]
                deck[j] = deck[k]
                deck[k] = tmp
            board = (CARD_BITS[deck[0]] | CARD_BITS[deck[1]] | CARD_BITS[deck[2]]
                     | CARD_BITS[deck[3]] | CARD_BITS[deck[4]])
            mine = rank_key_kernel(board | CARD_BITS[h0] | CARD_BITS[h1])
            ties = 1
            lost = False
            for p in range(num_players - 1):
                other = rank_key_kernel(board | CARD_BITS[deck[5 + 2 * p]]
                                        | CARD_BITS[deck[6 + 2 * p]])
                if other > mine:
                    lost = True
                    break
                if other == mine:
                    ties += 1
            if not lost:
                total += 1.0 / ties
        equity[i] = total / samples
