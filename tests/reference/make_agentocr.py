"""Regenerate ``agentocr.json.gz``: AgentOCR's own renderer on a set of histories.

Not run in CI. AgentOCR is not on PyPI: fetch repository ``langfengQ/AgentOCR`` at commit
25736f7 and put its ``agentocr/`` package at ``$SCRATCH/AgentOCR/agentocr``. Two steps:

1. Write the histories with envhub (the project's virtualenv)::

       PYTHONPATH=$PWD .venv/bin/python tests/reference/make_agentocr.py histories $SCRATCH/h.json

2. Render them with AgentOCR in a scratch virtualenv with the same Pillow, numpy and font file
   (DejaVu Sans Mono as shipped in matplotlib 3.11.2, the font envhub uses)::

       python3 -m venv $SCRATCH/ocr
       $SCRATCH/ocr/bin/pip install pillow==12.3.0 numpy==2.4.6 matplotlib==3.11.2
       $SCRATCH/ocr/bin/python tests/reference/make_agentocr.py render \\
           $SCRATCH/h.json --agentocr $SCRATCH/AgentOCR

Rendering is done as AgentOCR's env manager does it (``OCRTool.convert_texts_to_images`` with
the segment cache on, ``use_precise=False``, compression 1.0), with the ALFWorld settings of
its ``examples/grpo_trainer/run_alfworld.sh`` (font 10, width 392) and the search settings
(font 12, width 560), padding 5, no highlights. For each history the fixture keeps the
image's shape and the SHA-256 of its RGB pixel array; for each segment, AgentOCR's wrapped
lines (``wrap_text_fast`` with its characters-per-line from ``get_font_metrics``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("agentocr.json.gz")
PRESETS = {"alfworld": {"font_size": 10, "max_width": 392}, "search": {"font_size": 12, "max_width": 560}}
WORDS = ["go", "to", "cabinet", "1", "open", "drawer", "[Observation]", "[Action]", "<search>",
         "</search>", "<information>", "Doc", "(Title:", "Paris)", "a" * 70, "x" * 130, "—", "é",
         "  ", "\t", "You", "arrive", "at", "countertop", "2.", "On", "it,", "you", "see"]  # fmt: skip


def make_histories(path: Path) -> None:
    """ALFWorld-style episode windows from envhub's memory, plus random word soups."""
    from envhub.agent import EpisodeMemory
    from envhub.render.samples import alfworld_style_steps

    rng = random.Random(16)
    histories: list[dict[str, Any]] = []
    for seed in range(12):
        steps = rng.randint(1, 30)
        memory = EpisodeMemory()
        for observation, action in alfworld_style_steps(steps, seed=seed):
            memory.store(observation, action)
        lines = list(memory.window(rng.choice([5, 10, 50]), "ocr").lines)
        histories.append({"preset": "alfworld", "text": "\n".join(lines)})
    for i in range(36):
        lines = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(rng.randint(1, 8))
        ]
        histories.append({"preset": ("alfworld", "search")[i % 2], "text": "\n".join(lines)})
    path.write_text(json.dumps(histories, ensure_ascii=False))
    print(f"wrote {len(histories)} histories to {path}", file=sys.stderr)


def render(path: Path, agentocr: Path) -> None:
    import matplotlib
    import numpy as np

    sys.path.insert(0, str(agentocr))
    from agentocr.ocrtool import OCRTool, split_into_segments
    from agentocr.utils import _get_cached_font, get_font_metrics, wrap_text_fast

    font_path = str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSansMono.ttf")
    histories = json.loads(path.read_text())
    tools = {
        name: OCRTool(enabled=True, use_parallel=False, padding=5, min_width=28, min_height=28,
                      max_height=4096, font_path=font_path, highlight_configs=None, **preset)
        for name, preset in PRESETS.items()
    }  # fmt: skip
    for history in histories:
        preset = PRESETS[history["preset"]]
        tool = tools[history["preset"]]
        (image,) = tool.convert_texts_to_images(
            [history["text"]], batch_size=1, active_masks=[True], compression_factor=[1.0],
            use_precise=False, enable_cache=True, current_steps=[1],
        )  # fmt: skip
        pixels = np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
        history["shape"] = list(pixels.shape)
        history["sha256"] = hashlib.sha256(pixels.tobytes()).hexdigest()
        font = _get_cached_font(font_path, preset["font_size"])
        cpl = int(preset["max_width"] / get_font_metrics(font, preset["font_size"])[0])
        history["chars_per_line"] = cpl
        history["wrapped"] = [
            [line for line, _ in wrap_text_fast(segment, cpl)]
            for segment in split_into_segments(history["text"])
        ]
        tool.reset()
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"histories": histories}, ensure_ascii=False).encode())
    print(f"rendered {len(histories)} histories into {OUT}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("step", choices=["histories", "render"])
    parser.add_argument("histories_file", type=Path)
    parser.add_argument("--agentocr", type=Path, help="AgentOCR checkout (step 'render')")
    args = parser.parse_args()
    if args.step == "histories":
        make_histories(args.histories_file)
    else:
        render(args.histories_file, args.agentocr)


if __name__ == "__main__":
    main()
