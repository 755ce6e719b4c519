"""Dr. MAS's math orchestra: a solver proposes, a verifier approves or sends it back.

The protocol of the authors' ``MathMultiAgentOrchestra`` (``langfengQ/DrMAS`` @19c632b,
``agent_system/agent/orchestra/math/``), restated in envhub's own words and prompts. The math
env is one step long, so the whole loop happens inside that step:

1. **Round r** (1 to ``max_rounds``): the **solver** of every member not yet approved reads the
   task (the single-agent Math prompt) and its team's outputs so far (earlier attempts and
   critiques) and writes a solution with its final answer in ``\\boxed{}``. That attempt
   becomes the member's action.
2. Unless it is the last round, the **verifier** of those members reads the same, the new
   attempt included, and ends with ``<verify>approve</verify>`` (the member is done) or
   ``<verify>reject</verify>`` (the solver tries again, with the critique in its context).
   Anything else approves, as the authors' ``update_approved_vector`` does. The loop ends
   early once every member is approved.
3. The env gets each member's last attempt (its ``\\boxed{}`` answer): the authors' loop sends
   the solver's latest response whether or not it was approved.

So a member makes 1 to ``max_rounds`` solver calls and up to ``max_rounds - 1`` verifier calls,
alternating, solver first; the env's reward sits on the member's last call (the rows' rule,
:mod:`envhub.rollout.orchestra.base`) and ``info["team_reward"]`` on all of them.

Validity (the authors' projections): the verifier's output is valid when it holds a
``<verify>…</verify>`` block and no CJK ideograph (U+4E00-U+9FFF); the solver's when it has a
final answer the env can read (:func:`envhub.envs.math.answer.extract_final_answer`).
Departures: the verdict is read from the first ``<verify>`` block, case- and
space-insensitively (``<verify> Reject </verify>`` rejects; the authors look for the exact
strings anywhere, approve first), as the search orchestra reads its verifier; the authors check
the solver's ``\\boxed{}`` anywhere in its response, envhub where the env reads it (after
``</think>``), so a valid attempt is always one the env can score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from envhub.core.wire import MATH_MAX_ROUNDS, OrchestraSpec
from envhub.envs.math.answer import extract_final_answer
from envhub.rollout.orchestra.base import CallRole, Orchestra, Turn
from envhub.rollout.orchestra.search import parse_block

__all__ = ["APPROVE", "REJECT", "SOLVER", "SOLVER_PROMPT", "VERIFIER", "VERIFIER_PROMPT", "MathOrchestra"]

#: The roles (each row's ``agent_id``).
SOLVER = "solver"
VERIFIER = "verifier"
#: The verifier's actions.
APPROVE = "approve"
REJECT = "reject"

SOLVER_PROMPT = """# Task
{env_prompt}

# Your team so far
{team}

# Your role: solver
You solve the problem for the team (attempt {round} of {rounds}). Work through it step by step: \
what is given, which operations lead to the answer, each calculation. If a teammate reviewed an \
earlier attempt, weigh the review: fix what it found wrong, keep what was right. End with the \
final answer, a number, inside \\boxed{{}}, for example \\boxed{{42}}."""

VERIFIER_PROMPT = """# Task
{env_prompt}

# Your team so far
{team}

# Your role: verifier
You check the solver's latest attempt (attempt {round} of {rounds}). Go through it step by step: \
does each step use the right numbers from the problem, is each calculation right, does the final \
answer answer the question asked? Say what is wrong, if anything. Then give your verdict as the \
last thing you write:
- the solution and its final answer are right: <verify>approve</verify>
- something is wrong, the solver tries again: <verify>reject</verify>"""


def _team(turn: Turn) -> str:
    """The team's outputs of this step so far, oldest first (the authors' team context)."""
    return "\n".join(f"The {c.role} said: {c.completion.text.strip()}" for c in turn.calls) or "(none yet)"


def _round(turn: Turn) -> int:
    """The round of the turn's next call: the solver calls made, plus one for a new attempt."""
    return sum(c.role == SOLVER for c in turn.calls)


class MathOrchestra(Orchestra):
    """Solver -> verifier, up to ``max_rounds`` solver attempts in the env step (see the module docstring).

    Args:
        max_rounds: the solver's attempts at most (the authors' ``max_loop_num``).
    """

    name = "math"
    roles = (SOLVER, VERIFIER)

    def __init__(self, max_rounds: int = MATH_MAX_ROUNDS) -> None:
        if max_rounds < 1:
            raise ValueError(f"max_rounds must be at least 1, not {max_rounds}")
        self.max_rounds = max_rounds

    @classmethod
    def from_spec(cls, spec: OrchestraSpec) -> Self:
        return cls(spec.max_rounds or MATH_MAX_ROUNDS)

    def parse(self, role: str, text: str) -> tuple[str, bool]:
        if role == VERIFIER:
            content, valid = parse_block(text, "verify", require_think=False)
            return (REJECT if content is not None and content.lower() == REJECT else APPROVE), valid
        answer = extract_final_answer(text)
        return ("" if answer is None else f"\\boxed{{{answer}}}"), answer is not None

    async def step(self, turns: Sequence[Turn], call: CallRole) -> None:
        rounds = self.max_rounds
        open_turns = list(turns)
        for r in range(rounds):
            attempts = await call(
                SOLVER,
                open_turns,
                lambda t: SOLVER_PROMPT.format(
                    env_prompt=t.env_prompt, team=_team(t), round=_round(t) + 1, rounds=rounds
                ),
            )
            for turn, attempt in zip(open_turns, attempts, strict=True):
                turn.action = attempt.action
            if r == rounds - 1:  # the last attempt goes to the env unreviewed, as in the authors' loop
                break
            verdicts = await call(
                VERIFIER,
                open_turns,
                lambda t: VERIFIER_PROMPT.format(
                    env_prompt=t.env_prompt, team=_team(t), round=_round(t), rounds=rounds
                ),
            )
            open_turns = [t for t, v in zip(open_turns, verdicts, strict=True) if v.action == REJECT]
            if not open_turns:
                break
