"""Policy backends behind one async interface (see :mod:`envhub.policy.base`).

* :class:`OpenAIBackend`: vLLM or any OpenAI-compatible server, token ids in and out.
* :class:`TransformersBackend`: a transformers model in this process (the CPU default).
* :class:`ChatTokenizer`: a model's tokenizer and chat template, from a local path.
* :func:`build_tiny_model`: a tiny Qwen2 model built locally, for tests and the CPU default.
* :class:`VllmServer`: start a vLLM server from its own virtualenv (tests, local runs).

Heavy dependencies (torch, transformers) load on first use, not on import.
"""

from envhub.policy.base import Completion, PolicyBackend, Prompt, SamplingParams
from envhub.policy.openai_http import OpenAIBackend
from envhub.policy.sampling import processed_logprobs, prompt_seed
from envhub.policy.tiny import build_tiny_model
from envhub.policy.tokenizer import ChatTokenizer
from envhub.policy.transformers_backend import TransformersBackend
from envhub.policy.vllm_server import VllmServer

__all__ = [
    "ChatTokenizer",
    "Completion",
    "OpenAIBackend",
    "PolicyBackend",
    "Prompt",
    "SamplingParams",
    "TransformersBackend",
    "VllmServer",
    "build_tiny_model",
    "processed_logprobs",
    "prompt_seed",
]
