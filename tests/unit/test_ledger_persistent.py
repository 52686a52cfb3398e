"""The ledger's persistent structures: old versions never change, and contents behave like a dict
or a list whatever the history of updates (including hash collisions and very long histories)."""

from __future__ import annotations

import pickle
import random

import pytest

from poker.wallet.ledger.plog import PLog
from poker.wallet.ledger.pmap import PMap


class Clash:
    """A key type whose hashes collide a lot (seven buckets), to force collision nodes."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return self.value % 7

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Clash) and other.value == self.value


@pytest.mark.parametrize("colliding", [False, True])
def test_a_pmap_behaves_like_a_dict_and_old_versions_never_change(colliding: bool) -> None:
    rng = random.Random(7)
    model: dict[object, int] = {}
    current: PMap[object, int] = PMap()
    versions: list[tuple[PMap[object, int], dict[object, int]]] = []
    for step in range(1_500):
        key: object = Clash(rng.randrange(60)) if colliding else rng.randrange(2_000)
        roll = rng.random()
        if roll < 0.5:
            model[key] = step
            current = current.set(key, step)
        elif roll < 0.7:
            other: object = Clash(rng.randrange(60)) if colliding else rng.randrange(2_000)
            batch = [(other, step)]
            batch.append((key, -step))
            model.update(batch)
            current = current.update(batch)
        else:
            model.pop(key, None)
            current = current.remove(key)
        versions.append((current, dict(model)))

    for version, expected in versions[::50]:
        assert dict(version.items_iter()) == expected
        assert len(version) == len(expected)
        assert all(version[k] == v for k, v in expected.items())
    assert current == PMap(model.items())


def test_a_pmap_shape_depends_only_on_its_keys() -> None:
    grown: PMap[int, int] = PMap()
    for key in range(3_000):
        grown = grown.set(key, key)
    for key in range(0, 3_000, 2):
        grown = grown.remove(key)

    assert grown._root == PMap((k, k) for k in range(1, 3_000, 2))._root


def test_a_pmap_lookup_of_a_missing_key() -> None:
    data = PMap([("a", 1)])

    assert data.get("b") is None
    assert data.get("b", 0) == 0
    assert "b" not in data
    assert data.remove("b") is data
    with pytest.raises(KeyError):
        data["b"]


def test_a_plog_appends_without_touching_older_versions() -> None:
    logs = [PLog[int]()]
    for item in range(100):
        logs.append(logs[-1].append(item))

    assert [len(log) for log in logs[::25]] == [0, 25, 50, 75, 100]
    assert list(logs[40]) == list(range(40))
    assert logs[100][99] == 99
    assert list(logs[100].newest_first(below=3)) == [2, 1, 0]
    assert logs[70] == PLog(range(70))
    with pytest.raises(IndexError):
        logs[10][10]


def test_a_long_log_compares_and_pickles_without_recursion() -> None:
    long: PLog[int] = PLog()
    for tx_id in range(1, 50_001):
        long = long.append(tx_id)
    copy = pickle.loads(pickle.dumps(long))

    assert copy == long
    assert len(copy) == 50_000
    assert copy.last() == 50_000
    assert list(copy.newest_first(below=2)) == [2, 1]
    assert PLog([1]) != PLog([2])
