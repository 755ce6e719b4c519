"""Read a Prometheus ``/metrics`` page into numbers, so tests can assert what was counted.

Servers in the tests are shared between tests, so counters start wherever earlier tests left
them: take a :class:`Scrape` before the traffic and one after, and compare with :meth:`Scrape.delta`.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Scrape", "scrape"]


@dataclass(frozen=True)
class Scrape:
    """Every sample of one scrape, keyed by sample name and label set."""

    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]

    @classmethod
    def parse(cls, text: str) -> Scrape:
        samples = {
            (sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }
        return cls(samples)

    def value(self, name: str, **labels: str) -> float:
        """The sample ``name`` with exactly these labels (``le`` included for buckets).

        Raises:
            KeyError: no such sample; the message lists the label sets ``name`` has.
        """
        key = (name, frozenset(labels.items()))
        if key not in self.samples:
            seen = sorted(str(dict(sorted(lab))) for n, lab in self.samples if n == name)
            raise KeyError(f"no sample {name}{labels}; {name} has label sets {seen}")
        return self.samples[key]

    def delta(self, before: Scrape, name: str, **labels: str) -> float:
        """How much ``name{labels}`` grew since ``before`` (a sample absent before counts as 0)."""
        start = before.samples.get((name, frozenset(labels.items())), 0.0)
        return self.value(name, **labels) - start


def scrape(client: httpx.Client, path: str = "/metrics") -> Scrape:
    """GET ``path`` with ``client`` and parse it (the response must be Prometheus text)."""
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain"), response.headers
    return Scrape.parse(response.text)
