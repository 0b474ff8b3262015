"""Exact earth mover's distance by brute force: the optimal transport plan between two small
histograms, found by successive shortest paths (Bellman-Ford) on the residual graph. Slow and
obviously correct: the oracle of holdem.abstraction.emd_kernels."""


def exact_emd(p, q, ground):
    """Minimum cost of moving histogram ``p`` onto ``q`` (equal totals) when a unit of mass
    moved from bucket i to bucket j costs ``ground[i][j]``."""
    n, m = len(p), len(q)
    source, sink = n + m, n + m + 1
    edges = []                         # [to, capacity, cost, index of the reverse edge]
    graph = [[] for _ in range(n + m + 2)]

    def add(u, v, cap, cost):
        graph[u].append(len(edges))
        edges.append([v, cap, cost, len(edges) + 1])
        graph[v].append(len(edges))
        edges.append([u, 0.0, -cost, len(edges) - 1])

    for i in range(n):
        add(source, i, float(p[i]), 0.0)
        for j in range(m):
            add(i, n + j, float("inf"), float(ground[i][j]))
    for j in range(m):
        add(n + j, sink, float(q[j]), 0.0)
    total = 0.0
    while True:
        dist = [float("inf")] * (n + m + 2)
        back = [None] * (n + m + 2)
        dist[source] = 0.0
        for _ in range(n + m + 1):
            changed = False
            for u in range(n + m + 2):
                if dist[u] == float("inf"):
                    continue
                for e in graph[u]:
                    v, cap, cost, _ = edges[e]
                    if cap > 1e-12 and dist[u] + cost < dist[v] - 1e-12:
                        dist[v] = dist[u] + cost
                        back[v] = e
                        changed = True
            if not changed:
                break
        if back[sink] is None:
            return total
        push, v = float("inf"), sink
        while v != source:
            e = back[v]
            push = min(push, edges[e][1])
            v = edges[edges[e][3]][0]
        v = sink
        while v != source:
            e = back[v]
            edges[e][1] -= push
            edges[edges[e][3]][1] += push
            total += push * edges[e][2]
            v = edges[edges[e][3]][0]
