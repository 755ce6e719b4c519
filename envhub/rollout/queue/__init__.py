"""Finished-group queues (in-process and Redis Streams); see :mod:`envhub.rollout.queue.base`."""

from envhub.rollout.queue.base import Delivery, GroupQueue

__all__ = ["Delivery", "GroupQueue"]
