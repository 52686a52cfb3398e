"""A persistent (immutable, structure-sharing) hash map for the ledger state.

The ledger state is a frozen value, yet it holds one entry per account, hold, transaction and
idempotency key: copying a dict of a million entries for every transaction would make the ledger
slower than the dealer that feeds it. ``PMap`` is a hash array mapped trie without bitmap
compression: each node is a 32-slot tuple indexed by 5 bits of the key's hash, so ``set`` copies
only the 3-5 nodes on the path to the key (O(log32 n)) and shares everything else with the old map.

The shape depends only on the set of keys (an entry sits at the shallowest level where its hash
prefix is unique; removals collapse single-leaf nodes), and equality compares contents.

>>> empty: PMap[str, int] = PMap()
>>> one = empty.set("cash:ann", 100)
>>> one["cash:ann"], len(one), len(empty)
(100, 1, 0)
>>> one.set("cash:ann", 70).get("cash:ann"), one.get("cash:ann")
(70, 100)
>>> one.remove("cash:ann") == empty
True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar, cast, overload

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

_BITS = 5
_WIDTH = 1 << _BITS
_SLOT = _WIDTH - 1
# Python hashes are 64-bit: below this shift two keys with equal hashes cannot be told apart.
_HASH_BITS = 64
_HASH_MASK = (1 << _HASH_BITS) - 1
_MISSING: Any = object()

# Representation, chosen for speed in pure Python:
# - a node is a list of 32 slots. Lists are copied with one C call (``node[:]``) and are never
#   mutated once a map that can reach them exists, so they are as immutable as tuples;
# - a slot holds None, a subnode (list), an entry ``(hash, key, value)`` (tuple), or a _Collision.
Node = list[Any]
Entry = tuple[int, Any, Any]


class _Collision:
    """Entries whose keys have the same full 64-bit hash (rare; a plain tuple of entries)."""

    __slots__ = ("entries", "hash")

    def __init__(self, entries: tuple[Entry, ...], hash_: int) -> None:
        self.entries = entries
        self.hash = hash_


def _empty() -> Node:
    return [None] * _WIDTH


def _merge(old: Entry | _Collision, new: Entry, shift: int) -> Any:
    """A subtree holding ``old`` and ``new`` (different keys) from level ``shift`` down."""
    old_hash = old.hash if isinstance(old, _Collision) else old[0]
    if shift >= _HASH_BITS:
        olds = old.entries if isinstance(old, _Collision) else (old,)
        return _Collision((*olds, new), new[0])
    node = _empty()
    old_slot = (old_hash >> shift) & _SLOT
    new_slot = (new[0] >> shift) & _SLOT
    if old_slot == new_slot:
        node[old_slot] = _merge(old, new, shift + _BITS)
    else:
        node[old_slot] = old
        node[new_slot] = new
    return node


def _with_entry(root: Node, entry: Entry) -> tuple[Node, bool]:
    """``root`` with ``entry`` set (a new root sharing all untouched nodes); and whether the key
    is new. Iterative on purpose: this is the hot path of every ledger transaction."""
    hash_, key = entry[0], entry[1]
    node = root
    shift = 0
    path: list[Any] = []
    while True:
        index = (hash_ >> shift) & _SLOT
        child = node[index]
        if type(child) is list:
            path.append(node)
            path.append(index)
            node = child
            shift += _BITS
            continue
        break
    added = True
    if child is None:
        new_child: Any = entry
    elif type(child) is tuple:
        if child[1] == key:
            new_child, added = entry, False
        else:
            new_child = _merge(child, entry, shift + _BITS)
    else:
        new_child, added = _into_collision(child, entry, shift)
    copy = node[:]
    copy[index] = new_child
    while path:
        index = path.pop()
        parent = path.pop()[:]
        parent[index] = copy
        copy = parent
    return copy, added


def _set_owned(root: Node, entry: Entry, owned: set[int]) -> bool:
    """Set ``entry`` under ``root`` in place, copying each node on the way that is not ``owned``
    (not created by this batch) first. ``root`` must be owned. Returns whether the key is new.

    The transient trick of Clojure's persistent maps: several keys set in one batch copy each
    shared node once, not once per key. Ids are stable because every owned node stays reachable
    from ``root`` for the whole batch."""
    hash_, key = entry[0], entry[1]
    node = root
    shift = 0
    while True:
        index = (hash_ >> shift) & _SLOT
        child = node[index]
        if type(child) is not list:
            break
        if id(child) not in owned:
            child = child[:]
            owned.add(id(child))
            node[index] = child
        node = child
        shift += _BITS
    if child is None:
        node[index] = entry
        return True
    if type(child) is tuple:
        if child[1] == key:
            node[index] = entry
            return False
        node[index] = _merge(child, entry, shift + _BITS)
        return True
    node[index], added = _into_collision(child, entry, shift)
    return added


def _into_collision(collision: _Collision, entry: Entry, shift: int) -> tuple[Any, bool]:
    if collision.hash != entry[0]:
        return _merge(collision, entry, shift + _BITS), True
    kept = tuple(e for e in collision.entries if e[1] != entry[1])
    return _Collision((*kept, entry), entry[0]), len(kept) == len(collision.entries)


def _collapsed(node: Node) -> Any:
    """``node``, or its only leaf if that is all it holds (keeps the shape canonical)."""
    children = [child for child in node if child is not None]
    if not children:
        return None
    if len(children) == 1 and type(children[0]) is not list:
        return children[0]
    return node


def _without_key(node: Node, shift: int, key: Any, hash_: int) -> Any:
    """``node`` without ``key``, or ``_MISSING`` if it is absent. Subnodes left with a single
    leaf are collapsed into their parent's slot; ``node`` itself is not."""
    index = (hash_ >> shift) & _SLOT
    child = node[index]
    if child is None:
        return _MISSING
    if type(child) is list:
        new_child = _without_key(child, shift + _BITS, key, hash_)
        if new_child is not _MISSING:
            new_child = _collapsed(new_child)
    elif type(child) is tuple:
        if child[1] != key:
            return _MISSING
        new_child = None
    else:
        collision = cast(_Collision, child)
        kept = tuple(e for e in collision.entries if e[1] != key)
        if len(kept) == len(collision.entries):
            return _MISSING
        new_child = kept[0] if len(kept) == 1 else _Collision(kept, collision.hash)
    if new_child is _MISSING:
        return _MISSING
    copy = node[:]
    copy[index] = new_child
    return copy


def _entries(node: Node) -> Iterator[Entry]:
    for child in node:
        if child is None:
            continue
        if type(child) is list:
            yield from _entries(child)
        elif type(child) is tuple:
            yield child
        else:
            yield from cast(_Collision, child).entries


class PMap(Mapping[K, V], Generic[K, V]):
    """An immutable mapping whose ``set`` and ``remove`` return a new map sharing structure."""

    __slots__ = ("_len", "_root")

    def __init__(self, items: Iterable[tuple[K, V]] = ()) -> None:
        self._root: Node = _empty()
        self._len = 0
        for key, value in items:
            self._root, added = _with_entry(self._root, (hash(key) & _HASH_MASK, key, value))
            self._len += added

    def __reduce__(self) -> tuple[type[PMap[K, V]], tuple[list[tuple[K, V]]]]:
        # Pickle the items, never the trie: the trie is laid out by hash(key), and string hashes
        # differ from one process to the next (hash randomization).
        return (type(self), (list(self.items_iter()),))

    @overload
    def get(self, key: K, /) -> V | None: ...

    @overload
    def get(self, key: K, /, default: V | T) -> V | T: ...

    def get(self, key: K, /, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` if it is absent (without raising)."""
        hash_ = hash(key) & _HASH_MASK
        node = self._root
        shift = 0
        while True:
            child = node[(hash_ >> shift) & _SLOT]
            if child is None:
                return default
            if type(child) is list:
                node = child
                shift += _BITS
                continue
            if type(child) is tuple:
                return child[2] if child[1] == key else default
            for entry in cast(_Collision, child).entries:
                if entry[1] == key:
                    return entry[2]
            return default

    def __getitem__(self, key: K) -> V:
        value: Any = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return cast(V, value)

    def __contains__(self, key: object) -> bool:
        found: Any = self.get(cast(K, key), _MISSING)
        return found is not _MISSING

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        return (entry[1] for entry in _entries(self._root))

    def items_iter(self) -> Iterator[tuple[K, V]]:
        """``(key, value)`` pairs in trie order (arbitrary but stable for one map)."""
        return ((entry[1], entry[2]) for entry in _entries(self._root))

    def set(self, key: K, value: V) -> PMap[K, V]:
        """A map with ``key`` bound to ``value``; ``self`` is unchanged."""
        root, added = _with_entry(self._root, (hash(key) & _HASH_MASK, key, value))
        new: PMap[K, V] = _new_map(PMap)
        new._root = root
        new._len = self._len + added
        return new

    def update(self, items: Mapping[K, V] | Iterable[tuple[K, V]]) -> PMap[K, V]:
        """A map with every ``(key, value)`` of ``items`` set (later pairs win); ``self`` is
        unchanged. Cheaper than chained ``set`` calls: shared nodes are copied once per batch."""
        if isinstance(items, Mapping) and len(items) == 1:  # the common case: plain ``set``
            ((key, value),) = items.items()
            return self.set(key, value)
        root = self._root[:]
        owned = {id(root)}
        length = self._len
        pairs = items.items() if isinstance(items, Mapping) else items
        for key, value in pairs:
            length += _set_owned(root, (hash(key) & _HASH_MASK, key, value), owned)
        new: PMap[K, V] = _new_map(PMap)
        new._root = root
        new._len = length
        return new

    def remove(self, key: K) -> PMap[K, V]:
        """A map without ``key`` (``self`` itself if the key is absent)."""
        root = _without_key(self._root, 0, key, hash(key) & _HASH_MASK)
        if root is _MISSING:
            return self
        new: PMap[K, V] = _new_map(PMap)
        new._root = root
        new._len = self._len - 1
        return new

    def __repr__(self) -> str:
        return f"PMap({dict(self.items_iter())!r})"


# Skips __init__ (and its argument handling) on the hot path of ``set``.
_new_map = object.__new__
