"""Placeholder replaced below."""
from envhub.core.registry import DataStatus


def data_status() -> DataStatus:
    return DataStatus(available=False, source="-", how_to_get="under construction")
