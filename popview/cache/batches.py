"""Items packed into consecutive batches under a budget (rows, events...)."""
from __future__ import annotations


def by_budget(items, sizes, budget: int) -> list[list]:
    """Consecutive items in batches whose sizes add up to at most `budget`
    (an item larger than the budget forms a batch of its own)."""
    batches, cur, acc = [], [], 0
    for item, size in zip(items, sizes):
        if cur and acc + size > budget:
            batches.append(cur)
            cur, acc = [], 0
        cur.append(item)
        acc += size
    if cur:
        batches.append(cur)
    return batches
