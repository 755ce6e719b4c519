"""Dr. MAS's search orchestra: a verifier routes each env step to a search agent or an answer agent.

The protocol of the authors' ``SearchMultiAgentOrchestra`` (``langfengQ/DrMAS`` @19c632b,
``agent_system/agent/orchestra/search/``), restated in envhub's own words and prompts:

1. The **verifier** reads the task (the single-agent Search-QA prompt: the question and the
   searches so far with their results) and decides whether the information is enough:
   ``<verify>yes</verify>`` routes to the answer agent, ``<verify>no</verify>`` to the search
   agent. Anything else (no block, another word) routes to the answer agent, as the authors'
   ``get_verification_vector`` does.
2. The **search** agent (after "no") sees the task and its teammates' outputs of this step and
   writes ``<search>query</search>``; the **answer** agent (after "yes") sees the task and writes
   ``<answer>…</answer>``. That block is the team's action for the env.
3. On the episode's last env step a "no" calls nobody (a search could no longer be answered)
   and the env receives an empty, invalid action, as in the authors' loop.

Validity, as the authors' ``general_projection``: a role's output is valid when it holds its
block (the first ``<tag>…</tag>``), no CJK ideograph (U+4E00-U+9FFF), and, for the search and
answer agents, exactly one ``<think>`` before exactly one ``</think>``. The verifier's block is
read whitespace- and case-insensitively (``<verify> No </verify>`` is a no; the authors match
the exact strings ``<verify>yes</verify>``/``<verify>no</verify>`` and would route it to the
answer agent).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envhub.rollout.orchestra.base import CallRole, Orchestra, Turn

__all__ = [
    "ANSWER",
    "ANSWER_PROMPT",
    "SEARCH",
    "SEARCH_PROMPT",
    "VERIFIER",
    "VERIFIER_PROMPT",
    "SearchOrchestra",
    "parse_block",
]

#: The roles (each row's ``agent_id``).
VERIFIER = "verifier"
SEARCH = "search"
ANSWER = "answer"

_CJK = re.compile(r"[\u4e00-\u9fff]")

VERIFIER_PROMPT = """# Task
{env_prompt}

# Your role: verifier
You lead a team: a search agent that queries the search engine, and an answer agent that gives \
the final answer. Look at the searches made so far (inside <search> </search>) and what they \
returned (inside <information> </information>). Were the queries sound: on the question, precise, \
not repeated? Is what was found enough to answer the question well?

This is step {step}. Reason step by step first. Then say who acts next:
- the information is enough, the answer agent answers: <verify>yes</verify>
- more is needed, the search agent searches: <verify>no</verify>"""

SEARCH_PROMPT = """# Task
{env_prompt}

# Your teammates at step {step}
{team}

# Your role: search agent
Your job is to query the search engine for what the team still needs to know. Inside \
<think> </think>, reason about the question, the earlier queries and their results, and your \
teammates' notes. Then write one query: <search> your query </search>."""

ANSWER_PROMPT = """# Task
{env_prompt}

# Your role: answer agent
Your job is to give the final answer. Inside <think> </think>, weigh the question and every \
search result so far, with what you know. Then answer briefly: <answer> your answer </answer>, \
for example <answer>Paris</answer>."""


def parse_block(text: str, tag: str, *, require_think: bool) -> tuple[str | None, bool]:
    """The first ``<tag>…</tag>`` block's stripped content (None without one) and the validity."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    content = None if match is None else match.group(1).strip()
    valid = content is not None and _CJK.search(text) is None
    if require_think:
        opening, closing = text.find("<think>"), text.find("</think>")
        once = text.count("<think>") == 1 and text.count("</think>") == 1
        valid = valid and once and opening < closing
    return content, valid


def _team(turn: Turn) -> str:
    return "\n".join(f"The {c.role} agent said: {c.completion.text.strip()}" for c in turn.calls) or "(none)"


class SearchOrchestra(Orchestra):
    """Verifier -> (search | answer), once per env step (see the module docstring)."""

    name = "search"
    roles = (VERIFIER, SEARCH, ANSWER)

    def parse(self, role: str, text: str) -> tuple[str, bool]:
        if role == VERIFIER:
            content, valid = parse_block(text, "verify", require_think=False)
            return ("no" if content is not None and content.lower() == "no" else "yes"), valid
        tag = SEARCH if role == SEARCH else ANSWER
        content, valid = parse_block(text, tag, require_think=True)
        return ("" if content is None else f"<{tag}>{content}</{tag}>"), valid

    async def step(self, turns: Sequence[Turn], call: CallRole) -> None:
        verdicts = await call(
            VERIFIER, turns, lambda t: VERIFIER_PROMPT.format(env_prompt=t.env_prompt, step=t.env_step + 1)
        )
        to_search = [t for t, v in zip(turns, verdicts, strict=True) if v.action == "no" and not t.last]
        to_answer = [t for t, v in zip(turns, verdicts, strict=True) if v.action == "yes"]
        searched = await call(
            SEARCH,
            to_search,
            lambda t: SEARCH_PROMPT.format(env_prompt=t.env_prompt, step=t.env_step + 1, team=_team(t)),
        )
        answered = await call(
            ANSWER, to_answer, lambda t: ANSWER_PROMPT.format(env_prompt=t.env_prompt, step=t.env_step + 1)
        )
        for turn, made in [*zip(to_search, searched, strict=True), *zip(to_answer, answered, strict=True)]:
            turn.action = made.action
