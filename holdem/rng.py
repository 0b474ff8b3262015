"""Per-worker random numbers for kernels: xoshiro256** on a uint64[4] state array.

The state is an ordinary array passed into kernels (never numba's or numpy's global RNG), so it can
be checkpointed and restored bit for bit. Seeds come from ``np.random.SeedSequence``; every
constant is ``np.uint64`` (mixing int64 and uint64 silently yields float64 in numba).
Drawing an action from a strategy (:func:`sample_action`, :func:`pick_action`) is here too, so
every floor that plays (the solver's traversals, the games' and analysis' play kernels) draws
alike.
"""

import numpy as np

from holdem._jit import njit_exact
from holdem._jit import njit_inline as njit

_ONE = np.uint64(1)
_SHIFT17 = np.uint64(17)
_SHIFT11 = np.uint64(11)
_NINE = np.uint64(9)
_FIVE = np.uint64(5)
_R7 = np.uint64(7)
_R45 = np.uint64(45)
_INV53 = 1.0 / 9007199254740992.0   # 2**-53


def make_states(seed, num_streams):
    """``num_streams`` independent states (uint64[num_streams, 4]) from one integer seed."""
    children = np.random.SeedSequence(int(seed)).spawn(int(num_streams))
    states = np.stack([c.generate_state(4, dtype=np.uint64) for c in children])
    states[np.all(states == 0, axis=1), 0] = 1        # the all-zero state is a fixed point
    return states


# numpy's SeedSequence (numpy/random/bit_generator.pyx, after O'Neill's seed_seq_fe): a pool of
# four 32-bit words mixed from the entropy, then hashed out into the state. Its constants:
_SS_INIT_A = np.uint64(0x43B0D7E5)
_SS_MULT_A = np.uint64(0x931E8875)
_SS_INIT_B = np.uint64(0x8B51F9DD)
_SS_MULT_B = np.uint64(0x58F38DED)
_SS_MIX_L = np.uint64(0xCA01F9DD)
_SS_MIX_R = np.uint64(0x4973F715)
_SS_SHIFT = np.uint64(16)
_SS_MASK = np.uint64(0xFFFFFFFF)
_SS_POOL = 4


@njit_exact
def _ss_hash(value, hash_const):
    """One hash of a 32-bit word (in uint64) with the running constant ``hash_const[0]``,
    which it advances."""
    value = (value ^ hash_const[0]) & _SS_MASK
    hash_const[0] = (hash_const[0] * _SS_MULT_A) & _SS_MASK
    value = (value * hash_const[0]) & _SS_MASK
    return value ^ (value >> _SS_SHIFT)


@njit_exact
def _ss_mix(x, y):
    result = (_SS_MIX_L * x - _SS_MIX_R * y) & _SS_MASK
    return result ^ (result >> _SS_SHIFT)


@njit_exact
def seed_sequence_state(words, out, scratch):
    """``np.random.SeedSequence(entropy).generate_state(len(out), np.uint64)`` into ``out``
    (uint64), for the entropy's 32-bit words ``words`` (uint64 holding uint32 values; see
    :func:`entropy_words`), no spawn key: the same bits, without SeedSequence's Python-level
    cost (13-18 us a call, which a worker paid every flush; this takes 3). ``scratch``:
    uint64[5] (the running hash constant, then the pool)."""
    n = words.shape[0]
    hash_const = scratch[:1]
    pool = scratch[1:1 + _SS_POOL]
    hash_const[0] = _SS_INIT_A
    for i in range(_SS_POOL):
        pool[i] = _ss_hash(words[i] if i < n else np.uint64(0), hash_const)
    for src in range(_SS_POOL):
        for dst in range(_SS_POOL):
            if src != dst:
                pool[dst] = _ss_mix(pool[dst], _ss_hash(pool[src], hash_const))
    for src in range(_SS_POOL, n):
        for dst in range(_SS_POOL):
            pool[dst] = _ss_mix(pool[dst], _ss_hash(words[src], hash_const))
    mult = _SS_INIT_B
    for k in range(out.shape[0]):
        lo = np.uint64(0)
        for half in range(2):
            value = (pool[(2 * k + half) % _SS_POOL] ^ mult) & _SS_MASK
            mult = (mult * _SS_MULT_B) & _SS_MASK
            value = (value * mult) & _SS_MASK
            value ^= value >> _SS_SHIFT
            if half == 0:
                lo = value
            else:
                out[k] = lo | (value << np.uint64(32))


def seed_sequence(values, n_words=4):
    """``np.random.SeedSequence(list(values)).generate_state(n_words, np.uint64)`` for
    non-negative ints, by :func:`seed_sequence_state`."""
    out = np.empty(n_words, np.uint64)
    seed_sequence_state(entropy_words(values), out, np.empty(1 + _SS_POOL, np.uint64))
    return out


def entropy_words(values):
    """The 32-bit words SeedSequence takes from a sequence of non-negative ints (each int's
    words, least significant first; 0 is one word), as uint64."""
    words = []
    for v in values:
        v = int(v)
        if v < 0:
            raise ValueError(f"a seed must be non-negative, got {v}")
        words.append(v & 0xFFFFFFFF)
        v >>= 32
        while v:
            words.append(v & 0xFFFFFFFF)
            v >>= 32
    return np.array(words, np.uint64)


@njit
def _rotl(x, k):
    return (x << k) | (x >> (np.uint64(64) - k))


@njit
def next_u64(s):
    result = _rotl(s[1] * _FIVE, _R7) * _NINE
    t = s[1] << _SHIFT17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], _R45)
    return result


@njit
def uniform(s):
    """A float64 in [0, 1)."""
    return np.float64(next_u64(s) >> _SHIFT11) * _INV53


@njit
def below(s, n):
    """An integer in [0, n) (n small; the modulo bias is below 2**-50)."""
    return np.int64((next_u64(s) >> _SHIFT11) % np.uint64(n))


GOLDEN = np.uint64(0x9E3779B97F4A7C15)      # 2**64 / golden ratio: splitmix64's increment
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)


@njit
def mix64(x):
    """splitmix64's finalizer: a bijection on uint64 that spreads every input bit."""
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    return x ^ (x >> _S31)


@njit
def keyed_uniform(key, index):
    """A float64 in [0, 1) that depends only on (``key``, ``index``): the same draw wherever
    the same pair comes up, e.g. common random numbers for one decision in two plays of a
    deal."""
    z = mix64(np.uint64(key) + (np.uint64(index) + _ONE) * GOLDEN)
    return np.float64(z >> _SHIFT11) * _INV53


@njit
def pick_action(probs, n, x):
    """The action whose share of [0, 1) under probs[:n] (in order) holds ``x``."""
    acc = 0.0
    for a in range(n - 1):
        acc += probs[a]
        if x < acc:
            return a
    return n - 1


@njit
def sample_action(probs, n, s):
    """An action index drawn from probs[:n] (which sum to 1)."""
    return pick_action(probs, n, uniform(s))
