"""Small UCR-format datasets made by envhub's own generator (for tests and examples).

:func:`write_ucr_dataset` writes ``<Name>_TRAIN`` and ``<Name>_TEST`` files in the real
``.ts`` (or ``.tsv``) format. The classes are three of the generator's anomaly kinds, so
the data has real structure a classifier can learn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from envhub.envs.timeseries.generator import generate

__all__ = ["FIXTURE_CLASSES", "write_ucr_dataset"]

FIXTURE_CLASSES = ("normal", "global_point", "level_shift")


def write_ucr_dataset(
    directory: Path, *, name: str = "EnvhubSynthetic", per_class: int = 4, seed: int = 0, fmt: str = "ts"
) -> Path:
    """Write a small dataset and return its directory.

    Args:
        directory: where to write the two files.
        name: dataset name (file prefix).
        per_class: series per class and split.
        seed: generator seed.
        fmt: ``"ts"`` or ``"tsv"``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for split in ("TRAIN", "TEST"):
        rows = []
        for label, kind in enumerate(FIXTURE_CLASSES):
            for _ in range(per_class):
                values = generate(rng, kind).values[:200]
                rows.append((str(label), values))
        lines = []
        if fmt == "ts":
            lines += [
                f"@problemName {name}",
                "@timeStamps false",
                "@univariate true",
                "@equalLength true",
                "@seriesLength 200",
                f"@classLabel true {' '.join(str(i) for i in range(len(FIXTURE_CLASSES)))}",
                "@data",
            ]
            lines += [",".join(f"{v:.6g}" for v in values) + f":{label}" for label, values in rows]
        else:
            lines += [label + "\t" + "\t".join(f"{v:.6g}" for v in values) for label, values in rows]
        (directory / f"{name}_{split}.{fmt}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory
