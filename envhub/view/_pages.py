"""The viewer's HTML, written as plain f-strings over escaped values (no template engine).

Every number shown comes from :mod:`envhub.view._credit` (that is, from ``envhub.algos``) or
from the stored records; the page formats it and keeps the exact value in ``data-value``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlencode

from envhub.core.records import Group, Step, Trajectory
from envhub.view._credit import GroupCredit, StepCredit, StepKey
from envhub.view._sources import Batch
from envhub.view._svg import graph_chart, line_chart

__all__ = [
    "ALL",
    "RECENT",
    "Filters",
    "group_page",
    "overview_page",
    "step_page",
    "step_url",
]

#: Curves drawn when the run logged them; a ``rollout/`` curve gets its ``val/`` twin as dots.
CURVES = (
    "rollout/success",
    "rollout/reward",
    "rollout/episode_length",
    "rollout/valid_action",
    "actor/pg_loss",
    "actor/entropy",
    "actor/kl",
    "advantage/abs_mean",
)


#: The overview shows the groups of the last RECENT batches unless asked for ALL (a long run's
#: groups do not fit in memory at once) or for one.
RECENT = 10
ALL = "all"


@dataclass(frozen=True)
class Filters:
    """The overview's filters (empty: no filter)."""

    task: str = ""
    env: str = ""
    success: str = ""  # "", "won", "lost"
    version: str = ""
    batch: str = ""

    def keeps_group(self, batch: str, group: Group) -> bool:
        if self.batch not in ("", ALL) and batch != self.batch:
            return False
        if self.task and group.task_id != self.task:
            return False
        if self.env and group.env_id != self.env:
            return False
        if self.version and str(group.policy_version) != self.version:
            return False
        return not self.success or any(self.keeps_trajectory(t) for t in group.trajectories)

    def keeps_trajectory(self, traj: Trajectory) -> bool:
        return not self.success or traj.won == (self.success == "won")


def _url(path: str, **query: Any) -> str:
    clean = {k: v for k, v in query.items() if v not in ("", None)}
    return escape(f"{path}?{urlencode(clean)}" if clean else path)


def step_url(batch: str, uid: str, traj_id: str, step_idx: int) -> str:
    """The permalink of one step (query parameters: ids may hold any character)."""
    return _url("/step", batch=batch, uid=uid, traj=traj_id, step=step_idx)


def _num(value: float | None, element_id: str = "", cls: str = "num") -> str:
    if value is None:
        return '<span class="muted">-</span>'
    ident = f' id="{element_id}"' if element_id else ""
    sign = "pos" if value > 0 else "neg" if value < 0 else "zero"
    return f'<span{ident} class="{cls} {sign}" data-value="{value!r}" title="{value!r}">{value:+.4f}</span>'


def layout(title: str, body: str, *, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """The page frame: stylesheet and script from the package, breadcrumbs, body."""
    trail = " / ".join(
        f'<a href="{href}">{escape(label)}</a>' if href else escape(label) for label, href in crumbs
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} · envhub view</title>"
        '<link rel="stylesheet" href="/static/view.css"><script defer src="/static/view.js"></script>'
        f'</head><body><header><a class="brand" href="/">envhub view</a><nav>{trail}</nav></header>'
        f"<main><h1>{escape(title)}</h1>{body}</main></body></html>"
    )


def _table(head: Sequence[str], rows: Iterable[str], *, element_id: str = "") -> str:
    ident = f' id="{element_id}"' if element_id else ""
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f"<table{ident}><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# -- overview ------------------------------------------------------------------------------------


def _curves(metrics: Sequence[dict[str, Any]]) -> str:
    charts = []
    for key in CURVES:
        series = [(float(r["iteration"]), float(r[key])) for r in metrics if r.get(key) is not None]
        points: list[tuple[float, float]] = []
        if key.startswith("rollout/"):
            val = "val/" + key.removeprefix("rollout/")
            points = [(float(r["iteration"]), float(r[val])) for r in metrics if r.get(val) is not None]
        if series or points:
            charts.append(line_chart(key, series, points, element_id="curve-" + key.replace("/", "-")))
    if not charts:
        return ""
    legend = (
        '<p class="legend"><span class="key train"></span>training '
        '<span class="key val"></span>validation</p>'
    )
    return f'<section><h2>Learning curves</h2>{legend}<div class="charts">{"".join(charts)}</div></section>'


def _select(
    name: str, label: str, options: Iterable[tuple[str, str]], chosen: str, *, first: str = "any"
) -> str:
    opts = [f'<option value="">{escape(first)}</option>'] + [
        f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>{escape(text)}</option>'
        for v, text in options
    ]
    return f'<label>{escape(label)} <select name="{name}" id="filter-{name}">{"".join(opts)}</select></label>'


def _summary(rows: Sequence[tuple[str, str]]) -> str:
    if not rows:
        return ""
    cells = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<section><h2>Summary</h2><table class="summary" id="summary">{cells}</table></section>'


def overview_page(
    title: str,
    kind: str,
    summary: Sequence[tuple[str, str]],
    metrics: Sequence[dict[str, Any]],
    batches: Sequence[Batch],
    groups: Sequence[tuple[Batch, Group]],
    filters: Filters,
) -> str:
    """Learning curves, filters and the groups that pass them."""
    tasks = sorted({g.task_id for _, g in groups})
    envs = sorted({g.env_id for _, g in groups})
    versions = sorted({g.policy_version for _, g in groups if g.policy_version is not None})
    form = (
        '<form class="filters" method="get" action="/">'
        + _select(
            "batch",
            "batch",
            [(ALL, "all"), *((b.key, b.label) for b in batches)],
            filters.batch,
            first=f"latest {RECENT}" if len(batches) > RECENT else "all",
        )
        + _select("env", "env", [(e, e) for e in envs], filters.env)
        + _select("task", "task", [(t, t) for t in tasks], filters.task)
        + _select("success", "success", [("won", "won"), ("lost", "lost")], filters.success)
        + _select("version", "policy version", [(str(v), str(v)) for v in versions], filters.version)
        + '<button type="submit" id="apply-filters">filter</button></form>'
    )
    rows = []
    for batch, g in groups:
        if not filters.keeps_group(batch.key, g):
            continue
        trajs = [t for t in g.trajectories if filters.keeps_trajectory(t)]
        mean = sum(t.episode_return for t in trajs) / len(trajs) if trajs else math.nan
        href = _url("/group", batch=batch.key, uid=g.uid, success=filters.success)
        rows.append(
            f'<tr class="group-row" data-uid="{escape(g.uid)}"><td>{escape(batch.label)}</td>'
            f"<td>{escape(g.env_id)}</td><td>{escape(g.task_id)}</td>"
            f'<td><a class="group-link" href="{href}">{escape(g.uid)}</a></td>'
            f"<td>{'' if g.policy_version is None else g.policy_version}</td><td>{len(trajs)}</td>"
            f"<td>{g.success_rate:.2f}</td><td>{mean:.3f}</td></tr>"
        )
    table = _table(
        ["batch", "env", "task", "group", "policy version", "trajectories", "success", "mean return"],
        rows,
        element_id="groups",
    )
    body = (
        f'<p class="muted">{escape(kind)} · {len(batches)} batches · {len(groups)} groups</p>'
        + _summary(summary)
        + _curves(metrics)
        + f"<section><h2>Groups</h2>{form}{table}</section>"
    )
    return layout(title, body, crumbs=[(title, "")])


# -- a group -------------------------------------------------------------------------------------


def _settings_line(credit: GroupCredit) -> str:
    fields = ", ".join(f"{k}={v}" for k, v in vars(credit.config).items())
    name = escape(credit.algo.upper())
    return f'<p class="settings"><b>{name}</b> <span class="muted">{escape(fields)}</span></p>'


def _by_key(group: Group) -> dict[StepKey, tuple[Trajectory, Step]]:
    return {(t.traj_id, s.step_idx): (t, s) for t in group.trajectories for s in t.steps}


def group_page(batch: Batch, group: Group, credit: GroupCredit, filters: Filters) -> str:
    """Trajectories as rows of steps (coloured by anchor group) and the anchor groups that link them."""
    rows = []
    for traj in group.trajectories:
        if not filters.keeps_trajectory(traj):
            continue
        cells = []
        for step in traj.steps:
            c = credit.steps.get((traj.traj_id, step.step_idx))
            anchor_group = None if c is None else c.anchor_group
            shared = anchor_group is not None and len(credit.anchor_groups[anchor_group]) > 1
            tone = f" ag{anchor_group % 12}" if shared and anchor_group is not None else ""
            href = step_url(batch.key, group.uid, traj.traj_id, step.step_idx)
            valid = "" if step.is_action_valid else " invalid"
            cells.append(
                f'<td class="cell{tone}{valid}"><a class="step-link" href="{href}" '
                f'data-traj="{escape(traj.traj_id)}" data-step="{step.step_idx}">'
                f"<b>{step.step_idx}</b> {escape(step.action[:28])}</a><br>r={step.reward:g} "
                f"A={_num(None if c is None else c.advantage)}</td>"
            )
        won = "won" if traj.won else "lost"
        rows.append(
            f'<tr class="traj {won}"><th>{escape(traj.traj_id)}<br><span class="muted">{won}, '
            f"return {traj.episode_return:g}</span></th>{''.join(cells)}</tr>"
        )
    grid = f'<table class="grid" id="trajectories"><tbody>{"".join(rows)}</tbody></table>'
    anchors = ""
    if credit.anchor_groups:
        steps = _by_key(group)
        blocks = []
        for i, members in enumerate(credit.anchor_groups):
            if len(members) < 2:
                continue
            anchor = steps[members[0]][1].anchor
            links = "".join(
                f'<li><a href="{step_url(batch.key, group.uid, t, s)}">{escape(t)} · step {s}</a> '
                f"A<sup>S</sup>={_num(credit.steps[(t, s)].step)} "
                f"A<sup>E</sup>={_num(credit.steps[(t, s)].episode)}</li>"
                for t, s in members
            )
            blocks.append(
                f'<div class="anchor-group ag{i % 12}" id="anchor-group-{i}"><pre class="anchor">'
                f"{escape(anchor[:400])}</pre><ul>{links}</ul></div>"
            )
        anchors = (
            "<section><h2>Anchor groups (GiGPO and GraphGPO step groups)</h2>"
            f'<p class="muted">Steps taken in the same anchor state, across trajectories; '
            f"{len(credit.anchor_groups)} groups, {len(blocks)} with more than one step.</p>"
            f'<div class="anchor-groups">{"".join(blocks)}</div></section>'
        )
    title = f"group {group.uid}"
    body = (
        f"<p>{escape(group.env_id)} · task <b>{escape(group.task_id)}</b> · policy version "
        f"{group.policy_version} · {batch.label}</p>{_settings_line(credit)}"
        f"<section><h2>Trajectories</h2>{grid}</section>{_graph_section(credit)}{anchors}"
    )
    crumbs = [("overview", "/"), (batch.label, _url("/", batch=batch.key)), (title, "")]
    return layout(title, body, crumbs=crumbs)


def _graph_section(credit: GroupCredit) -> str:
    graph = credit.graph
    if graph is None:
        return ""
    rows = [
        f'<tr class="graph-node {escape(n.kind)}"><td>{"✓" if n.kind == "success" else i}</td>'
        f"<td>{n.distance}{'' if n.reachable else ' (unreachable)'}</td>"
        f'<td><pre class="anchor">{escape(n.label[:200])}</pre></td></tr>'
        for i, n in enumerate(graph.nodes)
    ]
    variant = "d(next) - d(anchor) + 1" if getattr(credit.config, "normalize_distance", False) else "d(next)"
    return (
        "<section><h2>Transition graph (GraphGPO)</h2>"
        f'<p class="muted">States of this group\'s trajectories, each step an edge to the state it '
        f"led to; columns by distance d to success (unreachable states: the largest d + 1). "
        f"A step's return is 10 &middot; &gamma;<sup>{escape(variant)}</sup>, normalised among the "
        f"steps taken in the same state (the anchor groups below).</p>"
        f'<div class="graph-wrap">{graph_chart(graph)}</div>'
        + _table(["node", "distance", "state"], rows, element_id="graph-nodes")
        + "</section>"
    )


# -- a step --------------------------------------------------------------------------------------


def _tokens(step: Step, pieces: Sequence[str] | None) -> str:
    """The response with each token shaded by its sampling log-prob (darker = less likely)."""
    ids, logprobs = step.response_token_ids, step.response_logprobs
    if not ids or not logprobs or len(ids) != len(logprobs):
        return f'<pre class="response">{escape(step.response_text)}</pre>'
    spans = []
    for i, (token, lp) in enumerate(zip(ids, logprobs, strict=True)):
        text = pieces[i] if pieces is not None else f"[{token}]"
        shade = min(1.0, max(0.0, 1.0 - math.exp(lp))) if math.isfinite(lp) else 1.0
        spans.append(
            f'<span class="tok" style="background: rgba(220, 60, 40, {0.8 * shade:.3f})" '
            f'data-logprob="{lp!r}" title="id {token} · logprob {lp:.3f}">{escape(text)}</span>'
        )
    return f'<pre class="response tokens" id="response-tokens">{"".join(spans)}</pre>'


def _credit_block(batch: Batch, group: Group, credit: GroupCredit, key: StepKey, c: StepCredit) -> str:
    rows = [f"<tr><th>advantage (used by the update)</th><td>{_num(c.advantage, 'advantage')}</td></tr>"]
    algo = credit.algo.lower()
    if algo in ("gigpo", "graphgpo"):
        w = getattr(credit.config, "step_advantage_w", 1.0)
        we = getattr(credit.config, "episode_advantage_w", None)
        rows.append(
            f"<tr><th>episode advantage A<sup>E</sup>{'' if we is None else f' (weight {we:g})'}</th>"
            f"<td>{_num(c.episode, 'episode-advantage')}</td></tr>"
        )
        rows.append(
            f"<tr><th>step advantage A<sup>S</sup> (weight {w:g})</th>"
            f"<td>{_num(c.step, 'step-advantage')}</td></tr>"
        )
        if c.distances is not None:
            rows.append(
                f'<tr><th>distance to success, before &rarr; after the step</th><td id="graph-distance">'
                f"{c.distances[0]} &rarr; {c.distances[1]}</td></tr>"
            )
    elif algo == "grpo":
        rows.append(f"<tr><th>episode advantage</th><td>{_num(c.episode, 'episode-advantage')}</td></tr>")
    elif c.episode is not None:
        rows.append(
            f"<tr><th>base group (episode) item, weight 1</th>"
            f"<td>{_num(c.episode, 'episode-advantage')}</td></tr>"
        )
    out = f'<table class="credit" id="credit">{"".join(rows)}</table>'
    if c.anchor_group is not None:
        anchor_peers = credit.anchor_groups[c.anchor_group]
        links = "".join(
            f"<li{' class=here' if p == key else ''}>"
            f'<a class="peer" href="{step_url(batch.key, group.uid, p[0], p[1])}">'
            f"{escape(p[0])} · step {p[1]}</a> A<sup>S</sup>={_num(credit.steps[p].step)}</li>"
            for p in anchor_peers
        )
        out += (
            f"<h3>Steps sharing this anchor ({len(anchor_peers)})</h3>"
            f'<ul class="peers ag{c.anchor_group % 12}" id="anchor-peers">{links}</ul>'
        )
    if c.levels:
        level_rows = []
        for item in c.levels:
            peers = ", ".join(
                f'<a href="{step_url(batch.key, group.uid, p[0], p[1])}">{escape(p[0])}·{p[1]}</a>'
                for p in item.peers
                if p != key
            )
            level_rows.append(
                f'<tr class="level" data-level="{item.level}" data-weight="{item.weight!r}" '
                f'data-used="{str(item.used).lower()}"><td>{item.level}</td><td>{item.weight:g}</td>'
                f"<td>{len(item.peers)}</td><td>{_num(item.advantage, cls='num level-advantage')}</td>"
                f"<td>{'yes' if item.used else 'no (zero or alone)'}</td><td>{peers or '-'}</td></tr>"
            )
        out += "<h3>HGPO hierarchy</h3>" + _table(
            ["level", "weight", "group size", "level advantage", "counted", "same history"],
            level_rows,
            element_id="hgpo-levels",
        )
    return out


def step_page(
    batch: Batch,
    group: Group,
    credit: GroupCredit,
    key: StepKey,
    pieces: Sequence[str] | None,
    *,
    show_image: bool,
) -> str:
    """One step: what the policy saw and did, the reward and the credit it got."""
    traj, step = _by_key(group)[key]
    c = credit.steps[key]
    meta = [
        ("env", group.env_id),
        ("task", group.task_id),
        ("trajectory", f"{traj.traj_id} ({'won' if traj.won else 'lost'}, return {traj.episode_return:g})"),
        ("policy version", str(step.policy_version)),
        ("action", step.action),
        ("valid", "yes" if step.is_action_valid else "no"),
        ("reward", f"{step.reward:g}"),
        ("done", "terminated" if step.terminated else "truncated" if step.truncated else "no"),
        ("anchor", step.anchor[:300]),
    ]
    meta_rows = "".join(
        f'<tr><th>{escape(k)}</th><td id="meta-{k.replace(" ", "-")}">{escape(v)}</td></tr>' for k, v in meta
    )
    index = [s.step_idx for s in traj.steps].index(step.step_idx)
    nav = []
    if index > 0:
        href = step_url(batch.key, group.uid, traj.traj_id, traj.steps[index - 1].step_idx)
        nav.append(f'<a id="prev-step" href="{href}">← previous step</a>')
    if index + 1 < len(traj.steps):
        href = step_url(batch.key, group.uid, traj.traj_id, traj.steps[index + 1].step_idx)
        nav.append(f'<a id="next-step" href="{href}">next step →</a>')
    image = ""
    if show_image:
        src = _url("/image", batch=batch.key, uid=group.uid, traj=key[0], step=key[1])
        image = (
            f'<figure class="history"><img id="history-image" src="{src}" alt="AgentOCR history image">'
            "<figcaption>AgentOCR history image (what the policy saw)</figcaption></figure>"
        )
    observation = (
        '<div class="observation"><h3>Observation</h3>'
        f'<pre id="observation">{escape(step.observation)}</pre></div>'
    )
    body = (
        f'<p class="permalink">permalink: <a id="permalink" href="{step_url(batch.key, group.uid, *key)}">'
        f"{step_url(batch.key, group.uid, *key)}</a></p><p>{' · '.join(nav)}</p>"
        f'<div class="columns"><div><table class="meta">{meta_rows}</table>'
        f"<h2>Credit</h2>{_settings_line(credit)}{_credit_block(batch, group, credit, key, c)}</div>"
        f"<div>{observation}{image}<h3>Response</h3>{_tokens(step, pieces)}</div></div>"
    )
    title = f"{traj.traj_id} · step {step.step_idx}"
    crumbs = [
        ("overview", "/"),
        (batch.label, _url("/", batch=batch.key)),
        (f"group {group.uid}", _url("/group", batch=batch.key, uid=group.uid)),
        (title, ""),
    ]
    return layout(title, body, crumbs=crumbs)
