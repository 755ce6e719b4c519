"""Policy backends behind one async interface (see :mod:`envhub.policy.base`)."""

from envhub.policy.base import Completion, PolicyBackend, Prompt, SamplingParams

__all__ = ["Completion", "PolicyBackend", "Prompt", "SamplingParams"]
