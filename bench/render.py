"""AgentOCR history rendering: a 50-step episode, full history rendered at every step.

Four renderers run side by side, interleaved in one process, on the same ALFWorld-like
history (AgentOCR's settings: DejaVu Sans Mono 10, width 392, character-count wrapping,
``[Observation]`` blue / ``[Action]`` red; history window 50 = every step):

* ``uncached``: every step draws every line with Pillow's ``ImageDraw.text`` (FreeType
  rasterises every glyph), as AgentOCR's renderer does without its cache;
* ``segment cache (pillow)``: AgentOCR's segment cache: only the new line is drawn, tiles stacked;
* ``glyph atlas, no segment cache``: every line redrawn, from envhub's glyph atlas;
* ``cached``: envhub's default, glyph atlas + segment cache.

All four must give identical pixels (checked). With ``--agentocr PATH`` (a checkout of
langfengQ/AgentOCR, used in place and never copied) the released ``OCRTool`` runs in the same
loop, cache off and on, with the ALFWorld script's settings, as reference rows.

The history comes from real ``envhub/ALFWorld-v0`` episodes (seeded random policy) when the
ALFWorld extra is installed, else from envhub's seeded ALFWorld-style generator. Token
accounting compares the image's Qwen2.5-VL vision tokens with a pre-token estimate of the
same history as text.

    python bench/render.py                     # 5 repeats per renderer
    python bench/render.py --repeats 9 --png docs/agentocr_history_30steps.png
    python bench/render.py --agentocr /path/to/AgentOCR   # adds the reference renderer
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

from envhub.agent import EpisodeMemory
from envhub.render import (
    HistoryRenderer,
    RenderConfig,
    SegmentCache,
    Typesetter,
    estimate_text_tokens,
)
from envhub.render.samples import alfworld_style_steps


def alfworld_steps(steps: int, seed: int) -> tuple[list[tuple[str, str]], str]:
    """(observation, action) pairs from real ALFWorld episodes, or the generator's as fallback."""
    try:
        import envhub
        from envhub.core.policy import RandomPolicy

        env = envhub.make("envhub/ALFWorld-v0")
        obs, info = env.reset(seed=seed)
    except Exception as exc:  # the alfworld extra or its data is missing: say so and fall back
        print(f"ALFWorld unavailable ({exc.__class__.__name__}); using the ALFWorld-style generator")
        return alfworld_style_steps(steps, seed=seed), "synthetic"
    policy = RandomPolicy(seed)
    pairs: list[tuple[str, str]] = []
    while len(pairs) < steps:
        action = policy.act(obs, info)
        action = "look" if action == "help" else action
        pairs.append((obs, action))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset(seed=seed + len(pairs))
    env.close()
    return pairs, "envhub/ALFWorld-v0 (random policy)"


def histories(pairs: list[tuple[str, str]]) -> list[list[str]]:
    """The history (AgentOCR line format, window = everything) after each step."""
    memory = EpisodeMemory()
    out = []
    for observation, action in pairs:
        memory.store(observation, action)
        out.append(list(memory.window(len(pairs), "ocr").lines))
    return out


class ReferenceRenderer:
    """AgentOCR's released ``OCRTool`` behind the same ``reset``/``render`` calls (bench only).

    It is imported from the checkout the user names; its per-call statistics prints are
    swallowed and the folder it creates in the working directory goes to a temporary one.
    """

    def __init__(self, checkout: Path, *, cache: bool) -> None:
        sys.path.insert(0, str(checkout))
        from agentocr.ocrtool import OCRTool

        self._workdir = tempfile.mkdtemp(prefix="agentocr-")
        with contextlib.chdir(self._workdir):
            self.tool = OCRTool(
                enabled=True,
                use_parallel=False,
                font_size=10,
                padding=5,
                min_width=28,
                max_width=392,
                min_height=28,
                max_height=4096,
                highlight_configs=[
                    {"context": "[Observation]", "color": [0, 0, 255]},
                    {"context": "[Action]", "color": [255, 0, 0]},
                ],
            )
        self.cache = cache

    def reset(self) -> None:
        self.tool.reset()

    def render(self, lines: list[str]) -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            images = self.tool.convert_texts_to_images(
                ["\n".join(lines)],
                batch_size=1,
                compression_factor=[1.0],
                use_precise=False,  # what AgentOCR's env managers pass
                enable_cache=self.cache,
                current_steps=[len(lines)],
            )
        return images[0]


def run_episode(renderer: Any, steps: list[list[str]]) -> tuple[list[float], float, Any]:
    """Per-step wall times, the episode's CPU time, and the last image's pixels."""
    renderer.reset()
    times = []
    out = None
    cpu0 = time.thread_time()
    for lines in steps:
        t0 = time.perf_counter()
        out = renderer.render(lines)
        times.append(time.perf_counter() - t0)
    pixels = out if isinstance(out, np.ndarray) else out.pixels
    return times, time.thread_time() - cpu0, pixels


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5, help="episodes per renderer (median reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", type=Path, default=None, help="also save the 30-step history image here")
    parser.add_argument("--agentocr", type=Path, default=None, help="AgentOCR checkout: add its renderer")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 5 steps, 1 episode per renderer (tests/test_bench.py)",
    )
    args = parser.parse_args()
    if args.quick:
        args.steps, args.repeats = 5, 1

    load_before = os.getloadavg()[0]
    pairs, source = alfworld_steps(args.steps, args.seed)
    steps = histories(pairs)
    config = RenderConfig.alfworld()
    atlas, pillow = Typesetter(config), Typesetter(config, engine="pillow")
    renderers = {
        "uncached (pillow draw.text)": HistoryRenderer(config, typesetter=pillow),
        "segment cache (pillow)": HistoryRenderer(config, typesetter=pillow, cache=SegmentCache()),
        "glyph atlas, no segment cache": HistoryRenderer(config, typesetter=atlas),
        "cached (atlas + segment cache)": HistoryRenderer(config, typesetter=atlas, cache=SegmentCache()),
    }
    references: dict[str, Any] = {}
    if args.agentocr is not None:
        references = {
            "AgentOCR OCRTool, cache off": ReferenceRenderer(args.agentocr, cache=False),
            "AgentOCR OCRTool, cache on": ReferenceRenderer(args.agentocr, cache=True),
        }
    names = list(renderers)
    everyone: dict[str, Any] = {**renderers, **references}
    order = list(everyone)
    episodes: dict[str, list[float]] = {n: [] for n in order}
    cpu: dict[str, list[float]] = {n: [] for n in order}
    per_step: dict[str, list[float]] = {n: [] for n in order}
    finals = {}
    for name in order:  # warm-up episode (not timed)
        run_episode(everyone[name], steps)
    for rep in range(args.repeats):
        for name in order[rep % len(order) :] + order[: rep % len(order)]:  # rotate to share noise
            times, cpu_s, pixels = run_episode(everyone[name], steps)
            episodes[name].append(sum(times))
            cpu[name].append(cpu_s)
            per_step[name].extend(times)
            finals[name] = pixels
    identical = len({finals[n].tobytes() for n in names}) == 1
    ref_pixels = {
        n: float((finals[n] != finals[names[-1]]).any(axis=2).mean())
        if finals[n].shape == finals[names[-1]].shape
        else 1.0
        for n in references
    }
    # render() returns the pixel array; the PIL image is made on first use. Its cost, at the
    # last (largest) step, for the record:
    last = renderers[names[-1]].render(steps[-1])
    t0 = time.perf_counter()
    for _ in range(20):
        last._image = None
        _ = last.image
    pil_ms = (time.perf_counter() - t0) / 20 * 1e3

    base = statistics.median(episodes[names[0]])
    rows = []
    table = Table(
        title=f"AgentOCR history rendering: {args.steps}-step episode, full history each step ({source})"
    )
    columns = (
        "renderer",
        "episode ms (median)",
        "episode CPU ms",
        "p50 step ms",
        "p90 step ms",
        "vs uncached",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "renderer" else "right")
    for name in [*references, *names]:
        ep = statistics.median(episodes[name])
        q = statistics.quantiles(per_step[name], n=10)
        rows.append(
            {
                "renderer": name,
                "episode_ms_median": ep * 1e3,
                "episode_ms_all": [e * 1e3 for e in episodes[name]],
                "episode_cpu_ms_median": statistics.median(cpu[name]) * 1e3,
                "step_ms_p50": statistics.median(per_step[name]) * 1e3,
                "step_ms_p90": q[8] * 1e3,
                "speedup_vs_uncached": base / ep,
            }
        )
        table.add_row(
            name,
            f"{ep * 1e3:.1f}",
            f"{rows[-1]['episode_cpu_ms_median']:.1f}",
            f"{rows[-1]['step_ms_p50']:.3f}",
            f"{q[8] * 1e3:.3f}",
            f"{base / ep:.1f}x",
        )
    by_name = {row["renderer"]: row for row in rows}
    cached = by_name[names[3]]
    segment_only = by_name[names[0]]["episode_ms_median"] / by_name[names[1]]["episode_ms_median"]
    atlas_segment = by_name[names[2]]["episode_ms_median"] / by_name[names[3]]["episode_ms_median"]
    table.caption = (
        f"identical pixels across renderers: {'yes' if identical else 'NO'}; segment cache alone: "
        f"{segment_only:.1f}x on pillow, {atlas_segment:.1f}x on the atlas; PIL image from the "
        f"{steps[-1].__len__()}-step pixels: {pil_ms:.2f} ms (on demand); load avg {load_before:.1f}"
        + "".join(f"; {n}: {share:.1%} of pixels differ from envhub's" for n, share in ref_pixels.items())
    )
    table.add_section()
    table.add_row(
        "speedup with the cache (cached vs uncached)", "", "", "", "", f"{cached['speedup_vs_uncached']:.1f}x"
    )

    token_table = Table(
        title="Vision tokens (Qwen2.5-VL, 28 px merged patches) vs text tokens (pre-token estimate)"
    )
    for column in ("step", "image px", "vision tokens", "text tokens (est.)", "saving"):
        token_table.add_column(column, justify="right")
    token_rows = []
    plain = HistoryRenderer(config)
    for t in (10, 30, 50):
        if t > len(steps):
            continue
        out = plain.render(steps[t - 1])
        vision, text = out.vision_tokens(), estimate_text_tokens("\n".join(steps[t - 1]))
        token_rows.append(
            {"step": t, "size": list(out.size), "vision_tokens": vision, "text_tokens_est": text}
        )
        token_table.add_row(
            str(t), "x".join(map(str, out.size)), str(vision), str(text), f"{1 - vision / text:.0%}"
        )
        if t == 30 and args.png is not None:
            args.png.write_bytes(out.png())

    console = Console(width=140)
    console.print(token_table)
    console.print(table)
    path = write_result(
        "render",
        {
            "steps": args.steps,
            "repeats": args.repeats,
            "seed": args.seed,
            "source": source,
            "font_size": config.font_size,
            "width": config.width,
            "highlights": True,
            "identical_pixels": identical,
            "load_average_1m_before": load_before,
            "load_average_1m_after": os.getloadavg()[0],
            "pil_image_ms_p50": pil_ms,
            "agentocr_checkout": str(args.agentocr) if args.agentocr else None,
            "agentocr_pixels_differing": ref_pixels,
        },
        [*rows, {"tokens": token_rows}],
    )
    console.print(f"wrote {path}")
    # The last line of the table, as the issue asks: the cached speedup as NN.Nx.
    print(f"speedup with the cache: {cached['speedup_vs_uncached']:.1f}x")


if __name__ == "__main__":
    main()
