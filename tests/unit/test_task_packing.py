"""Write buckets are packed into tasks of about equal work, the heaviest task first."""

from __future__ import annotations

from engine.write.planner import pack


def test_packing_balances_the_tasks() -> None:
    # 14 equal file-group rewrites in 4 tasks: 4, 4, 3, 3 (hashing the bucket numbers gave 6, 4, 2, 2).
    task_of = pack({b: 100.0 for b in range(14)}, 4)
    sizes = sorted((list(task_of.values()).count(t) for t in range(4)), reverse=True)
    assert sizes == [4, 4, 3, 3]
    # The heaviest bucket is alone in task 0; small ones fill the lighter tasks.
    task_of = pack({0: 1000.0, 1: 10.0, 2: 10.0, 3: 300.0, 4: 300.0, 5: 300.0}, 3)
    assert task_of[0] == 0 and [b for b, t in task_of.items() if t == 0] == [0]
    assert {task_of[3], task_of[4], task_of[5]} == {1, 2}
    assert pack({7: 1.0}, 8) == {7: 0}
