"""Sokoban rooms: the grid codes, the text rendering, moves, and the random room generator.

The generator follows the reverse-playing scheme of gym-sokoban, which verl-agent's Sokoban env
builds on (restated, not copied):

1. **Topology.** Start from solid wall. A random walk of ``num_steps`` steps over the interior
   turns with probability ``p_change_directions`` and stamps one of five small 3x3 masks
   (a bar, a column, three corners) of floor around each position; the border is wall again.
2. **Placement.** The player and ``num_boxes`` targets go on distinct random floor cells; each
   box starts on its target.
3. **Reverse play.** A depth-first search (depth ``search_depth``) walks the player backwards:
   every move drags a box that stands behind the player along (a *pull*). Each room reached is
   scored ``box_swaps * sum of box-to-origin-target Manhattan distances``, where ``box_swaps``
   counts switches between pulled boxes; a room with every box back on a target scores 0. The
   best-scoring room is the puzzle, so every generated room is solvable by pushing the pulls
   back.
4. A room scoring 0 (nothing could be pulled) is discarded and the generator tries again.

Everything is drawn from the ``numpy.random.Generator`` it is given: the same generator state
gives the same room.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ACTIONS",
    "BOX",
    "BOX_ON_TARGET",
    "FLOOR",
    "MOVES",
    "PLAYER",
    "PLAYER_ON_TARGET",
    "SYMBOLS",
    "TARGET",
    "WALL",
    "GenerationError",
    "Room",
    "generate_room",
    "one_push_room",
    "parse_text",
    "render_text",
]

# The grid codes of gym-sokoban (room_state); 6 is only used when rendering.
WALL, FLOOR, TARGET, BOX_ON_TARGET, BOX, PLAYER, PLAYER_ON_TARGET = range(7)
#: verl-agent's text rendering: each cell a space, its symbol, a space and a tab; rows end in "\n".
SYMBOLS = {
    WALL: "#",
    FLOOR: "_",
    TARGET: "O",
    BOX_ON_TARGET: "√",
    BOX: "X",
    PLAYER: "P",
    PLAYER_ON_TARGET: "S",
}
#: The four moves, in verl-agent's action order (1 up, 2 down, 3 left, 4 right), as (drow, dcol).
MOVES: dict[str, tuple[int, int]] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
ACTIONS = tuple(MOVES)

# gym-sokoban's topology masks (floor where 1), each stamped centred on the walker.
_MASKS = (
    ((0, 0, 0), (1, 1, 1), (0, 0, 0)),
    ((0, 1, 0), (0, 1, 0), (0, 1, 0)),
    ((0, 0, 0), (1, 1, 0), (0, 1, 0)),
    ((0, 0, 0), (1, 1, 0), (1, 1, 0)),
    ((0, 0, 0), (0, 1, 1), (0, 1, 0)),
)
_WALK = ((1, 0), (0, 1), (-1, 0), (0, -1))
# Reverse play stops exploring after this many distinct rooms (gym-sokoban caps it likewise).
_MAX_EXPLORED = 300_000


class GenerationError(RuntimeError):
    """No room with a pullable box came out of the attempts (room too small for the boxes)."""


@dataclass
class Room:
    """A Sokoban state: the fixed layer (walls, floor, targets) and the moving pieces."""

    fixed: NDArray[np.int8]  # WALL, FLOOR or TARGET
    player: tuple[int, int]
    boxes: set[tuple[int, int]]

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.fixed.shape[0]), int(self.fixed.shape[1]))

    @property
    def targets(self) -> set[tuple[int, int]]:
        return {(int(r), int(c)) for r, c in zip(*np.nonzero(self.fixed == TARGET), strict=True)}

    def boxes_on_target(self) -> int:
        return sum(1 for b in self.boxes if self.fixed[b] == TARGET)

    def solved(self) -> bool:
        return self.boxes_on_target() == len(self.boxes)

    def copy(self) -> Room:
        return Room(self.fixed.copy(), self.player, set(self.boxes))

    def free(self, cell: tuple[int, int]) -> bool:
        """Inside the room, not a wall and not a box."""
        r, c = cell
        rows, cols = self.shape
        return 0 <= r < rows and 0 <= c < cols and self.fixed[r, c] != WALL and cell not in self.boxes

    def push(self, move: str) -> bool:
        """Walk one cell, pushing a box ahead if the cell behind it is free. Returns whether it moved.

        A move into a wall, or into a box that is blocked by a wall or another box, leaves the
        room as it was (gym-sokoban's push mode).
        """
        dr, dc = MOVES[move]
        ahead = (self.player[0] + dr, self.player[1] + dc)
        if ahead in self.boxes:
            beyond = (ahead[0] + dr, ahead[1] + dc)
            if not self.free(beyond):
                return False
            self.boxes.remove(ahead)
            self.boxes.add(beyond)
            self.player = ahead
            return True
        if self.free(ahead):
            self.player = ahead
            return True
        return False

    def state(self) -> NDArray[np.int8]:
        """gym-sokoban's room_state codes, with 6 for the player on a target."""
        grid = self.fixed.copy()
        for b in self.boxes:
            grid[b] = BOX_ON_TARGET if self.fixed[b] == TARGET else BOX
        grid[self.player] = PLAYER_ON_TARGET if self.fixed[self.player] == TARGET else PLAYER
        return grid


def render_text(room: Room) -> str:
    """verl-agent's text observation: ``" # \\t"`` per cell, rows joined by newlines."""
    return "\n".join("".join(f" {SYMBOLS[int(code)]} \t" for code in row) for row in room.state())


def parse_text(text: str) -> Room:
    """The room a :func:`render_text` string shows (a policy reads what the agent sees).

    Raises:
        ValueError: the text is not a rendered room (unknown symbol, ragged rows, no player).
    """
    codes = {symbol: code for code, symbol in SYMBOLS.items()}
    rows = [[codes[s] for s in line.replace("\t", " ").split()] for line in text.strip("\n").split("\n")]
    if not rows or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("not a rendered Sokoban room: rows of different lengths")
    grid = np.array(rows, dtype=np.int8)
    fixed = np.where(np.isin(grid, (TARGET, BOX_ON_TARGET, PLAYER_ON_TARGET)), TARGET, grid).astype(np.int8)
    fixed[np.isin(grid, (BOX, PLAYER))] = FLOOR
    players = list(zip(*np.nonzero(np.isin(grid, (PLAYER, PLAYER_ON_TARGET))), strict=True))
    if len(players) != 1:
        raise ValueError("not a rendered Sokoban room: it needs exactly one player")
    boxes = {(int(r), int(c)) for r, c in zip(*np.nonzero(np.isin(grid, (BOX, BOX_ON_TARGET))), strict=True)}
    return Room(fixed, (int(players[0][0]), int(players[0][1])), boxes)


def _topology(
    shape: tuple[int, int], rng: np.random.Generator, p_change: float, num_steps: int
) -> NDArray[np.int8]:
    rows, cols = shape
    level = np.zeros(shape, dtype=np.int8)
    direction = _WALK[int(rng.integers(len(_WALK)))]
    position = np.array([int(rng.integers(1, rows - 1)), int(rng.integers(1, cols - 1))])
    for _ in range(num_steps):
        if rng.random() < p_change:
            direction = _WALK[int(rng.integers(len(_WALK)))]
        position = np.clip(position + direction, [1, 1], [rows - 2, cols - 2])
        mask = np.array(_MASKS[int(rng.integers(len(_MASKS)))], dtype=np.int8)
        r, c = int(position[0]), int(position[1])
        level[r - 1 : r + 2, c - 1 : c + 2] |= mask
    level[[0, -1], :] = 0
    level[:, [0, -1]] = 0
    return np.where(level > 0, FLOOR, WALL).astype(np.int8)


def _reverse_move(
    room: Room, move: str, pull: bool, origin: dict[tuple[int, int], tuple[int, int]]
) -> tuple[bool, tuple[int, int] | None]:
    """Step ``move`` backwards in time; with ``pull``, a box right behind the player follows.

    Returns whether the player moved and, when a box was pulled, that box's identity (the
    target it started on).
    """
    dr, dc = MOVES[move]
    ahead = (room.player[0] + dr, room.player[1] + dc)
    if not room.free(ahead):
        return False, None
    behind = (room.player[0] - dr, room.player[1] - dc)
    old = room.player
    room.player = ahead
    if pull and behind in room.boxes:
        room.boxes.remove(behind)
        room.boxes.add(old)
        origin[old] = origin.pop(behind)
        return True, origin[old]
    return True, None


def _reverse_play(start: Room, search_depth: int) -> tuple[Room, int]:
    """The best-scoring room reachable by reverse play (gym-sokoban's scoring; see above)."""
    explored: set[tuple[tuple[int, int], frozenset[tuple[int, int]]]] = set()
    best: list[tuple[int, Room]] = [(0, start.copy())]

    def visit(
        room: Room,
        origin: dict[tuple[int, int], tuple[int, int]],
        swaps: int,
        last: tuple[int, int] | None,
        ttl: int,
    ) -> None:
        ttl -= 1
        if ttl <= 0 or len(explored) >= _MAX_EXPLORED:
            return
        key = (room.player, frozenset(room.boxes))
        if key in explored:
            return
        explored.add(key)
        displacement = sum(abs(b[0] - o[0]) + abs(b[1] - o[1]) for b, o in origin.items())
        score = 0 if room.solved() else swaps * displacement
        if score > best[0][0]:
            best[0] = (score, room.copy())
        # Pulling moves first, then plain walks (gym-sokoban's eight reverse actions).
        for pull in (True, False):
            for move in ACTIONS:
                child, child_origin = room.copy(), dict(origin)
                moved, pulled = _reverse_move(child, move, pull, child_origin)
                if not moved:
                    continue
                # A pull of a different box than the previous pull is a swap; the first pull is one.
                changed = pulled is not None and pulled != last
                visit(child, child_origin, swaps + changed, pulled if pulled is not None else last, ttl)

    visit(start.copy(), {b: b for b in start.boxes}, 0, None, search_depth)
    score, room = best[0]
    return room, score


def one_push_room(
    shape: tuple[int, int], rng: np.random.Generator, *, moves: tuple[str, ...] = ACTIONS
) -> Room:
    """An open room (floor inside the walls) solved by one push, in a direction the room decides.

    The box stands next to the player and the target next to the box, in one of the directions
    that fit the room (left or right in a one-row corridor; all four in a room at least three
    cells high and wide), drawn uniformly, then the player's cell uniformly among those that fit.
    No fixed move solves more than the share of its direction, so the first move must be read
    off the room (``docs/training.md``, the learning test).

    Raises:
        GenerationError: the interior is shorter than three cells in both directions.
    """
    rows, cols = shape
    inner_rows, inner_cols = rows - 2, cols - 2
    fits = [m for m in moves if (inner_rows if MOVES[m][0] else inner_cols) >= 3]
    if not fits:
        raise GenerationError(
            f"A one-push room needs at least three floor cells in a row or column; {rows}x{cols} "
            "has fewer (the smallest is dim_room=[3, 5])."
        )
    dr, dc = MOVES[fits[int(rng.integers(len(fits)))]]
    # Player cells whose box and target cells (one and two ahead) are inside the walls.
    starts = [
        (r, c)
        for r in range(1, rows - 1)
        for c in range(1, cols - 1)
        if 1 <= r + 2 * dr <= rows - 2 and 1 <= c + 2 * dc <= cols - 2
    ]
    player = starts[int(rng.integers(len(starts)))]
    fixed = np.full(shape, WALL, dtype=np.int8)
    fixed[1:-1, 1:-1] = FLOOR
    fixed[player[0] + 2 * dr, player[1] + 2 * dc] = TARGET
    return Room(fixed, player, {(player[0] + dr, player[1] + dc)})


def generate_room(
    shape: tuple[int, int],
    num_boxes: int,
    rng: np.random.Generator,
    *,
    search_depth: int = 300,
    p_change_directions: float = 0.35,
    num_steps: int = 25,
    tries: int = 100,
) -> Room:
    """A solvable room (see the module docstring).

    Raises:
        GenerationError: no attempt gave a room with a box off its target.
    """
    rows, cols = shape
    for _ in range(tries):
        fixed = _topology((rows, cols), rng, p_change_directions, num_steps)
        floor = [(int(r), int(c)) for r, c in zip(*np.nonzero(fixed == FLOOR), strict=True)]
        if len(floor) < num_boxes + 1:
            continue
        picks = rng.choice(len(floor), size=num_boxes + 1, replace=False)
        player, targets = floor[int(picks[0])], [floor[int(i)] for i in picks[1:]]
        for t in targets:
            fixed[t] = TARGET
        room, score = _reverse_play(Room(fixed, player, set(targets)), search_depth)
        if score > 0:
            return room
    raise GenerationError(
        f"No solvable {rows}x{cols} room with {num_boxes} box(es) in {tries} attempts; use a larger "
        "dim_room or fewer boxes (the smallest room is 3x5 with one box)."
    )
