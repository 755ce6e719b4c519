"""Data for the time-series family: the built-in generator and UCR-format datasets.

The anomaly env needs no files (its series are generated from the task id). The
classification env reads a UCR/UEA dataset from a path the user gives:

* ``<dir>/<Name>_TRAIN.ts`` and ``<Name>_TEST.ts`` (the sktime/aeon ``.ts`` format: ``@``
  header lines, then one ``v1,v2,...:label`` line per series), or
* ``<dir>/<Name>_TRAIN.tsv`` and ``<Name>_TEST.tsv`` (the UCR 2018 archive: ``label<TAB>v1<TAB>...``).

The directory comes from the ``ucr_path`` argument or ``ENVHUB_UCR_DATA``; without either,
the ``aeon`` package's bundled copies are used when it is installed (``pip install aeon``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import DataNotFoundError
from envhub.core.registry import DataStatus

__all__ = [
    "UCR_ENV_VAR",
    "UCRDataset",
    "data_status",
    "find_ucr_dir",
    "load_ucr",
    "read_ts",
    "read_tsv",
    "ucr_data_status",
]

UCR_ENV_VAR = "ENVHUB_UCR_DATA"
DEFAULT_UCR_NAME = "GunPoint"
_HOW_TO_GET = (
    "download a UCR dataset (e.g. GunPoint_TRAIN.ts/GunPoint_TEST.ts) and set "
    f"{UCR_ENV_VAR} to its directory, "
    "or `pip install aeon`, which bundles a few UCR datasets"
)


@dataclass(frozen=True)
class UCRDataset:
    """One split of a UCR dataset: univariate series (possibly of unequal length) and labels."""

    name: str
    series: tuple[NDArray[np.float64], ...]
    labels: tuple[str, ...]

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.labels), key=_label_key))


def _label_key(label: str) -> tuple[int, float | str]:
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)


def read_ts(path: Path) -> tuple[list[NDArray[np.float64]], list[str]]:
    """Parse a univariate ``.ts`` file (``@data`` section of ``values:label`` lines)."""
    series, labels = [], []
    in_data = False
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            in_data = line.lower().startswith("@data")
            continue
        if not in_data:
            continue
        values, _, label = line.rpartition(":")
        series.append(
            np.array([float(v) if v != "?" else np.nan for v in values.split(",")], dtype=np.float64)
        )
        labels.append(label.strip())
    return series, labels


def read_tsv(path: Path) -> tuple[list[NDArray[np.float64]], list[str]]:
    """Parse a UCR 2018 ``.tsv`` file (label first, then the values)."""
    series, labels = [], []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        cells = raw.strip().split("\t")
        if len(cells) < 2:
            continue
        labels.append(cells[0].strip())
        series.append(
            np.array([float(v) if v.lower() != "nan" else np.nan for v in cells[1:]], dtype=np.float64)
        )
    return series, labels


def _aeon_dir() -> Path | None:
    try:
        import aeon
    except ImportError:
        return None
    return Path(aeon.__file__).parent / "datasets" / "data"


def find_ucr_dir(path: str | os.PathLike[str] | None, name: str) -> Path:
    """The directory holding ``name``'s files: the argument, ``ENVHUB_UCR_DATA``, or aeon's copy.

    Raises:
        DataNotFoundError: none of them has the dataset.
    """
    candidates = [Path(p) for p in (path, os.environ.get(UCR_ENV_VAR)) if p]
    aeon_dir = _aeon_dir()
    if aeon_dir is not None:
        candidates.append(aeon_dir / name)
    for directory in candidates:
        for folder in (directory, directory / name):
            if any((folder / f"{name}_TRAIN{ext}").is_file() for ext in (".ts", ".tsv")):
                return folder
    raise DataNotFoundError(
        f"UCR dataset {name!r}",
        path=candidates[0] if candidates else None,
        env_var=UCR_ENV_VAR,
        how_to_get=_HOW_TO_GET,
    )


def load_ucr(directory: Path, name: str, split: str) -> UCRDataset:
    """Load ``<name>_<SPLIT>.ts`` (or ``.tsv``) from ``directory``; ``split`` is train or test."""
    for ext, reader in ((".ts", read_ts), (".tsv", read_tsv)):
        file = directory / f"{name}_{split.upper()}{ext}"
        if file.is_file():
            series, labels = reader(file)
            return UCRDataset(name, tuple(series), tuple(labels))
    raise DataNotFoundError(
        f"UCR dataset {name!r} split {split!r}", path=directory, env_var=UCR_ENV_VAR, how_to_get=_HOW_TO_GET
    )


def data_status() -> DataStatus:
    """The anomaly env generates its series: always available."""
    return DataStatus(available=True, source="generated (built-in)")


def ucr_data_status() -> DataStatus:
    """Whether the default UCR dataset can be found."""
    try:
        directory = find_ucr_dir(None, DEFAULT_UCR_NAME)
    except DataNotFoundError:
        return DataStatus(available=False, source="-", how_to_get=_HOW_TO_GET)
    return DataStatus(available=True, source=str(directory))
