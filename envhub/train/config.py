"""The trainer's configuration: one pydantic model that a recipe YAML and the CLI both fill.

Every ``envhub-train`` option is a key of this model (the CLI's ``--iterations 3`` is the YAML's
``iterations: 3``, ``--set loss.kl_coef=0`` any nested key). Unknown keys and bad values are
refused with an error that names the key and says what it accepts::

    config = load_config("trainers/gigpo_sokoban.yaml", overrides={"iterations": 2})

The defaults are verl-agent's GiGPO scripts' (``shared/reference/algorithms.md`` §2.5 and
``round2_rollout_trainer.md`` §2): lr 1e-6, clip 0.2/0.2, dual clip 3, ``token-mean``, k3 KL
0.01, entropy 0.001, grad clip 1.0, one PPO epoch, T = 1.0 for training rollouts and T = 0.4,
n = 1 for validation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from envhub.core.errors import ConfigurationError
from envhub.core.wire import NoBooleanNumbers, PolicyEndpoint, RolloutRequest, redact, url_without_credentials
from envhub.rollout.jobs import set_path
from envhub.train.loss import KLKind

__all__ = [
    "AGENT_WISE_ALGOS",
    "DEFAULT_STREAM",
    "GROUNDED_METHODS",
    "ROLLOUT_SHORTHANDS",
    "SAMPLING_SEED",
    "SHARED_POLICY",
    "AgentPolicyConfig",
    "Algo",
    "CoSoConfig",
    "EntropyKind",
    "GroundedSettings",
    "KPOConfig",
    "LoRAConfig",
    "LossConfig",
    "ModelConfig",
    "OptimConfig",
    "OutputConfig",
    "RolloutSettings",
    "Strategy",
    "TrainConfig",
    "TrainerCredentials",
    "ValidationSettings",
    "WarmStartSettings",
    "load_config",
    "nest_shorthands",
]

Algo = Literal["grpo", "gigpo", "hgpo", "graphgpo"]
#: Data parallelism under torchrun (``envhub.train.parallel``).
Strategy = Literal["ddp", "fsdp2"]
#: The entropy bonus: ``plain`` (every response token alike) or ``coso`` (CoSo's causal entropy,
#: :mod:`envhub.train.coso`).
EntropyKind = Literal["plain", "coso"]


class TrainerCredentials(BaseSettings):
    """The trainer's secrets, from the environment only (never in a recipe or ``config.json``).

    ``ENVHUB_ENV_TOKEN``: the env servers' bearer token; ``ENVHUB_ROLLOUT_TOKEN``: the rollout
    service's (its ``ENVHUB_TOKEN``); ``ENVHUB_POLICY_API_KEY``: the policy server's key (vLLM
    ``--api-key``). The names are those ``deploy/k8s/trainer.yaml`` sets from its Secrets.
    """

    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="ignore")

    env_token: str | None = Field(default=None, description="Bearer token of the env servers.")
    rollout_token: str | None = Field(default=None, description="Bearer token of the rollout service.")
    policy_api_key: str | None = Field(
        default=None, description="Key of the OpenAI-compatible policy server."
    )


class _Strict(NoBooleanNumbers):
    """A section of the recipe: unknown keys and a boolean where a number is asked are refused."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LoRAConfig(_Strict):
    """Low-rank adapters (peft); the base weights stay frozen."""

    r: int = Field(default=8, ge=1, description="Adapter rank.")
    alpha: int = Field(default=16, ge=1, description="Adapter scaling numerator.")
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        description="Module names that get adapters.",
    )


class ModelConfig(_Strict):
    """The policy model the trainer updates."""

    path: str = Field(description="A local Hugging Face model directory (`envhub model tiny` builds one).")
    device: str = Field(
        default="auto", description="'auto' (cuda when present, else cpu), 'cpu', 'cuda:0'..."
    )
    dtype: Literal["float32", "bfloat16", "float16"] = Field(
        default="float32",
        description="Compute precision. The master weights (what AdamW updates) stay float32; "
        "bfloat16 and float16 run the forward and backward passes under autocast (float16 with "
        "dynamic loss scaling). Old, reference and new logprobs all use it, so the first ratio is 1.",
    )
    pure_bf16: bool = Field(
        default=False,
        description="Store the weights themselves in bfloat16 (no float32 masters; needs dtype "
        "bfloat16). Saves memory, but an AdamW step below bf16's spacing (lr 1e-6) is lost: warned.",
    )
    autocast_bf16: bool = Field(
        default=False, description="Deprecated alias of dtype: bfloat16 (kept for old recipes)."
    )
    gradient_checkpointing: bool = Field(
        default=False, description="Recompute activations in the backward pass (less memory, ~30% more time)."
    )
    logprob_chunk_tokens: int = Field(
        default=512,
        ge=0,
        description="Log-probs and entropies take the output head only at response tokens, this many "
        "at a time (recomputed in the backward pass), so no (rows, tokens, vocab) logits tensor exists. "
        "0: the whole-sequence logits of the model's forward (the old path; also used under FSDP2).",
    )
    lora: LoRAConfig | None = Field(default=None, description="Train LoRA adapters instead of all weights.")
    strategy: Strategy = Field(
        default="ddp",
        description="Data parallelism under torchrun: 'ddp' (every rank holds the whole model) or "
        "'fsdp2' (parameters, gradients and optimizer state sharded over ranks, for models that do "
        "not fit one device). One process ignores it.",
    )

    @model_validator(mode="after")
    def _strategy(self) -> ModelConfig:
        if self.autocast_bf16 and self.dtype == "float32":
            self.__dict__["dtype"] = "bfloat16"
        if self.pure_bf16 and self.dtype != "bfloat16":
            raise ValueError("model.pure_bf16 stores bfloat16 weights: it needs model.dtype='bfloat16'.")
        if self.dtype == "float16" and self.strategy == "fsdp2":
            raise ValueError(
                "model.dtype='float16' needs a loss scaler that FSDP2 sharding does not get here; "
                "use dtype 'bfloat16' with strategy 'fsdp2'."
            )
        if self.strategy == "fsdp2" and self.lora is not None:
            # The sampler, the vLLM push and checkpoints gather full weights from the shards; peft
            # would need its adapters merged into a sharded base, which is not wired.
            raise ValueError("model.strategy='fsdp2' does not take model.lora; use strategy 'ddp'.")
        return self


#: Flat keys older recipes and ``--set rollout.<key>`` use, and the request field each one sets
#: (``temperature: 0.7`` is ``sampling: {temperature: 0.7}``). A shorthand and its nested field
#: in one document must agree; a later layer (an override over the recipe) wins in either form.
ROLLOUT_SHORTHANDS: dict[str, tuple[str, str | None]] = {
    "temperature": ("sampling", "temperature"),
    "top_p": ("sampling", "top_p"),
    "top_k": ("sampling", "top_k"),
    "max_tokens": ("sampling", "max_tokens"),
    "history_length": ("context", "history_length"),
    "projection": ("context", "projection"),
    "envs": ("env_urls", None),
    "queue_stream": ("stream", None),
}


def nest_shorthands(section: dict[str, Any]) -> dict[str, Any]:
    """The ``rollout:`` section with its :data:`ROLLOUT_SHORTHANDS` moved to their nested fields.

    Raises:
        ValueError: a shorthand and its nested field both given, with different values.
    """
    data = dict(section)
    for key, (section_name, field) in ROLLOUT_SHORTHANDS.items():
        if key not in data:
            continue
        value = data.pop(key)
        nested = section_name if field is None else f"{section_name}.{field}"
        if field is None:
            if section_name in data and data[section_name] != value:
                raise ValueError(f"rollout.{key} is a shorthand of rollout.{nested}; give one of them")
            data[section_name] = value
            continue
        spec = data.get(section_name)
        if isinstance(spec, BaseModel):  # what the object was given conflicts, not its defaults
            target, given = spec.model_dump(), spec.model_dump(exclude_unset=True)
        else:
            target = dict(spec) if isinstance(spec, dict) else {}
            given = target
        if field in given and given[field] != value:
            raise ValueError(f"rollout.{key} is a shorthand of rollout.{nested}; give one of them")
        data[section_name] = {**target, field: value}
    return data


#: The trainer's key for reproducible rollouts: ``sampling_seed: s`` is ``sampling: {seed: s}`` with
#: ``seed_each_step: true`` (each group's step draws its own seed from s, the group's reset seed and
#: the step; :class:`~envhub.core.wire.RolloutRequest`), so a run and a resumed one sample alike.
SAMPLING_SEED = "sampling_seed"

#: Where the trainer's defaults differ from a service job's (each still declared once, on the request).
_TRAINER_DEFAULTS: dict[str, Any] = {"split": "train", "max_concurrent_groups": 64}
_TRAINER_SAMPLING_DEFAULTS: dict[str, Any] = {"max_tokens": 512}

#: The Redis stream a trainer's groups go to when ``rollout.stream`` is not set.
DEFAULT_STREAM = "envhub:groups"


class RolloutSettings(RolloutRequest):
    """The trainer's ``rollout:`` section: a :class:`~envhub.core.wire.RolloutRequest` plus its own keys.

    Every field of a rollout job (the body ``POST /v1/rollouts`` takes) means the same here:
    ``env_urls`` (empty: envs in this process), ``group_size``, ``max_steps``, ``sampling``,
    ``context``, ``max_concurrent_groups``, the timeouts, ``split``, ``env_kwargs``, ``stream``
    and ``run``. The trainer fills in per job what it owns: the policy at the current version,
    the tasks of each iteration (``task_ids`` or ``count`` here narrow the training split to
    those tasks) and their seeds. A ``policy`` endpoint here is the served policy every field of
    which applies (:meth:`endpoint`): its ``base_url`` is ``policy_url`` (and
    ``generation: openai``) unless those are given, ``model`` the name the requests use,
    ``max_concurrency`` and ``timeout_s`` the backend's cap and per-request limit, ``tokenizer``
    the tokenizer directory prompts are rendered with (as the rollout service reaches it, with
    ``rollout_service``); its key comes from ``ENVHUB_POLICY_API_KEY`` only. Defaults that
    differ from a service job's: ``split: train``, ``max_concurrent_groups: 64``,
    ``sampling.max_tokens: 512``. The flat keys of
    :data:`ROLLOUT_SHORTHANDS` (``temperature``, ``envs``, ``queue_stream``, ...) are accepted, and
    ``sampling_seed: s`` (:data:`SAMPLING_SEED`): ``sampling.seed: s`` with ``seed_each_step: true``.
    The request's ``trajectory_mode`` also switches the update to trajectory rows: one token
    sequence per episode, env tokens masked (:mod:`envhub.train.trajectory_rows`).
    """

    batch_tasks: int = Field(default=16, ge=1, description="Tasks per iteration (B); B x n trajectories.")
    max_prompt_tokens: int | None = Field(
        default=None, ge=1, description="Training limit on a row's prompt tokens (see overlong)."
    )
    max_response_tokens: int | None = Field(
        default=None, ge=1, description="Training limit on a row's response tokens (see overlong)."
    )
    overlong: Literal["mask", "truncate", "penalise"] = Field(
        default="mask",
        description="A row over max_prompt_tokens or max_response_tokens: mask leaves it out of the "
        "update (its group's advantages still count it); truncate keeps the prompt's last and the "
        "response's first tokens; penalise truncates and subtracts overlong_penalty from the step's "
        "reward before the advantages. Counted as rows/overlong_masked and rows/overlong_truncated.",
    )
    overlong_penalty: float = Field(
        default=1.0, ge=0.0, allow_inf_nan=False, description="The reward penalty of overlong: penalise."
    )
    generation: Literal["transformers", "openai"] = Field(
        default="transformers",
        description="transformers: sample in this process; openai: an OpenAI-compatible server "
        "(vLLM) at policy_url.",
    )
    policy_url: str | None = Field(default=None, description="The generation server's base URL.")

    @field_validator("policy_url")
    @classmethod
    def _policy_url_without_credentials(cls, url: str | None) -> str | None:
        return None if url is None else url_without_credentials(url, "policy_url")

    rollout_service: str | None = Field(
        default=None,
        description="Submit rollout jobs to this `envhub serve-rollouts` URL (needs a redis queue).",
    )
    queue: str = Field(default="memory", description="'memory', or a redis:// URL for finished groups.")
    max_batch: int = Field(default=64, ge=1, description="In-process generation: sequences per forward pass.")
    push_drain_timeout_s: float | None = Field(
        default=3600.0,
        gt=0,
        allow_inf_nan=False,
        description="A served policy: how long a weight push waits for the plays (or rollout-service "
        "jobs) in flight on the old weights before the run stops with PUSH_DRAIN_TIMEOUT; null: no limit.",
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = nest_shorthands(data)
        if SAMPLING_SEED in data:
            seed = data.pop(SAMPLING_SEED)
            if seed is not None:
                if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                    raise ValueError(f"{SAMPLING_SEED}: an integer >= 0 (got {seed!r})")
                target = data.get("sampling")
                if isinstance(target, BaseModel):
                    target = target.model_dump()
                data["sampling"] = {**(target if isinstance(target, dict) else {}), "seed": seed}
                data["seed_each_step"] = True
        for key, value in _TRAINER_DEFAULTS.items():
            data.setdefault(key, value)
        sampling = data.get("sampling")
        if sampling is None or isinstance(sampling, dict):
            data["sampling"] = {**_TRAINER_SAMPLING_DEFAULTS, **(sampling or {})}
        policy = data.get("policy")
        if isinstance(policy, dict) and "base_url" in policy:
            if data.get("policy_url") is not None:
                # policy_url (--policy-url) is set over policy.base_url: the section then records
                # the server its requests go to, not one they never reach (config.json, jobs).
                data["policy"] = {**policy, "base_url": data["policy_url"]}
            data.setdefault("policy_url", policy["base_url"])
            data.setdefault("generation", "openai")
        return data

    @model_validator(mode="after")
    def _endpoints(self) -> RolloutSettings:
        # The trainer's credentials come from the environment only (TrainerCredentials): a token
        # here would be ignored and written in clear to the run's config.json.
        if self.env_token is not None:
            raise ValueError("rollout.env_token: a recipe carries no secrets; set ENVHUB_ENV_TOKEN instead")
        if isinstance(self.policy, BaseModel) and self.policy.api_key is not None:
            raise ValueError(
                "rollout.policy.api_key: a recipe carries no secrets; set ENVHUB_POLICY_API_KEY instead"
            )
        if isinstance(self.policy, str):
            raise ValueError("policy: the trainer plays its own model; a scripted policy has no weights")
        if isinstance(self.policy, PolicyEndpoint) and self.generation != "openai":
            raise ValueError(
                "rollout.policy names a served policy, which generation='transformers' (sampling in "
                "this process) does not use: set generation: openai, or leave policy out"
            )
        if self.rollout_service and not self.queue.startswith(("redis://", "rediss://")):
            raise ValueError(
                "rollout_service needs queue to be a redis:// URL (where the service publishes)."
            )
        if self.rollout_service and self.generation != "openai":
            raise ValueError(
                "rollout_service plays episodes in another process, so the policy must be served: set "
                "generation='openai' and policy_url."
            )
        return self

    @field_serializer("queue", when_used="json")
    def _queue_without_password(self, queue: str) -> str:
        """The queue URL as config.json and the trackers get it: a password (deploy/k8s puts the
        Redis one in the URL) becomes ``***``; the trainer connects with the real one."""
        parts = urlsplit(queue)
        if parts.password is None:
            return queue
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))

    @property
    def queue_stream(self) -> str:
        """The Redis stream the run's groups go to (``stream``, else ``envhub:groups``)."""
        return self.stream or DEFAULT_STREAM

    def endpoint(self, *, model: str, tokenizer: str, api_key: str | None = None) -> PolicyEndpoint:
        """The served policy the run's requests go to (``generation: openai``).

        The section's ``policy`` whole (``model``, ``tokenizer``, ``max_concurrency``,
        ``timeout_s``) at ``policy_url``; what it leaves out is the trainer's: ``model`` (the name
        the server lists) and ``tokenizer`` (the trained model's directory).

        Args:
            model: the served model name, used when the section names none.
            tokenizer: the tokenizer directory, used when the section names none.
            api_key: the policy server's key (from the environment; a recipe holds none).

        Raises:
            ConfigurationError: there is no served policy (no ``policy_url``).
        """
        if self.policy_url is None:
            raise ConfigurationError("A served policy needs rollout.policy_url (or rollout.policy.base_url).")
        given: dict[str, Any] = {}
        if isinstance(self.policy, PolicyEndpoint):
            given = self.policy.model_dump(exclude={"api_key"}, exclude_none=True)
        fields = {"model": model, "tokenizer": tokenizer, **given}
        return PolicyEndpoint.model_validate({**fields, "base_url": self.policy_url, "api_key": api_key})

    def job(self, **update: Any) -> RolloutRequest:
        """This section as the rollout job it describes (the trainer's own keys left out), updated."""
        fields = {name: getattr(self, name) for name in RolloutRequest.model_fields}
        return RolloutRequest.model_validate({**fields, **update})


class KPOConfig(_Strict):
    """KPO's Kalman filter over token log ratios (``loss.ratio: kpo``; ``envhub.train.loss.KPOParams``).

    The defaults are the authors' (``shuohe1995/verl-kpo`` @ c3135943: ``kalman_Q`` 1e-6,
    ``kalman_R`` 1.0, P0 = 0).
    """

    q: float = Field(
        default=1e-6, ge=0.0, allow_inf_nan=False, description="Process noise Q: drift per token."
    )
    r: float = Field(
        default=1.0, gt=0.0, allow_inf_nan=False, description="Observation noise R: distrust of one token."
    )
    p0: float = Field(
        default=0.0, ge=0.0, allow_inf_nan=False, description="Initial variance P0 of the estimate (x0 = 0)."
    )


class CoSoConfig(_Strict):
    """CoSo's causal entropy (``loss.entropy: coso``; :mod:`envhub.train.coso`).

    The defaults are the authors' (``langfengQ/CoSo`` @ eb4f205c: ``digirl/models/autoui_agent.py``
    builds the classifier, ``update_causal`` in ``digirl/algorithms/causal_digirl/trainer.py``
    and ``scripts/config/main/default.yaml`` set its schedule).
    """

    window: int = Field(
        default=4, ge=1, description="Tokens replaced by the unknown token from each position on."
    )
    hidden: int = Field(default=128, ge=8, description="The classifier's width.")
    heads: int = Field(default=4, ge=1, description="Attention heads (must divide hidden).")
    layers: int = Field(default=3, ge=1, description="Transformer encoder layers.")
    ffn: int = Field(default=512, ge=1, description="Feed-forward width of each layer.")
    max_positions: int = Field(
        default=512, ge=1, description="The classifier reads a response's first this many tokens."
    )
    dropout: float = Field(default=0.1, ge=0.0, lt=1.0, description="Dropout while training the classifier.")
    max_labels: int = Field(
        default=64,
        ge=2,
        description="Action classes: projected actions in order of first appearance; past this "
        "many, new actions share the last class.",
    )
    lr: float = Field(
        default=1e-5, gt=0.0, allow_inf_nan=False, description="Adam's learning rate for the classifier."
    )
    epochs: int = Field(default=2, ge=1, description="Optimizer steps per classifier update.")
    samples: int = Field(
        default=1024, ge=1, description="(response, action) pairs drawn from the buffer per step."
    )
    batch_rows: int = Field(default=512, ge=1, description="Pairs per forward pass (gradients summed).")
    grad_clip: float = Field(default=0.01, gt=0.0, description="The classifier's gradient-norm clip.")
    pretrain: int = Field(
        default=500,
        ge=0,
        description="Classifier updates on the first iteration's rows before its policy update "
        "(the authors pretrain on offline data); later iterations run one.",
    )
    buffer_rows: int = Field(
        default=2000, ge=1, description="The classifier trains on the last this many valid rows."
    )

    @model_validator(mode="after")
    def _sizes(self) -> CoSoConfig:
        if self.hidden % self.heads:
            raise ValueError(f"loss.coso.heads ({self.heads}) must divide loss.coso.hidden ({self.hidden})")
        return self


class LossConfig(_Strict):
    """verl 0.9.1's actor loss (``envhub.train.loss``)."""

    clip_low: float = Field(default=0.2, ge=0.0, lt=1.0)
    clip_high: float = Field(default=0.2, ge=0.0)
    clip_c: float | None = Field(default=3.0, gt=1.0, description="Dual clip for A < 0; null turns it off.")
    ratio: Literal["token", "sequence", "kpo"] = Field(
        default="token", description="Importance ratio: per token (verl), per sequence (GSPO), or KPO."
    )
    kpo: KPOConfig = Field(
        default_factory=KPOConfig, description="KPO filter parameters (used with ratio: kpo)."
    )
    agg: Literal[
        "token-mean",
        "token-sum",
        "seq-mean-token-sum",
        "seq-mean-token-mean",
        "seq-mean-token-sum-norm",
        "token-sum-norm",
    ] = Field(
        default="token-mean",
        description="Loss aggregation (verl 0.9.1's agg_loss). seq-mean-token-sum-norm is 0.9.1's "
        "Dr. GRPO form (seq-mean-token-sum / norm_constant); token-sum-norm is verl-agent's older one "
        "(token sum / norm_constant, larger by the row count).",
    )
    norm_constant: float | None = Field(
        default=None,
        gt=0.0,
        description="The Dr. GRPO divisor (verl's loss_scale_factor); null: the padded response width.",
    )
    micro_batch_mean: bool = Field(
        default=False,
        description="verl-agent's old behaviour: mean per micro-batch, scaled by 1/accumulation steps, "
        "instead of one token mean over the mini-batch.",
    )
    kl_coef: float = Field(default=0.01, ge=0.0, description="k3 KL to a frozen reference; 0 skips it.")
    kl_kind: KLKind = Field(
        default="low_var_kl",
        description="verl's KL estimator; a '+' suffix keeps its value with k2's gradient "
        "(straight through).",
    )
    entropy_coef: float = Field(default=0.001, ge=0.0, allow_inf_nan=False)
    entropy: EntropyKind = Field(
        default="plain",
        description="The entropy bonus: plain (every response token alike) or coso (CoSo's causal "
        "entropy: each token's entropy weighted by its effect on the projected action).",
    )
    coso: CoSoConfig = Field(
        default_factory=CoSoConfig, description="The causal model and its schedule (entropy: coso)."
    )
    old_logprobs: Literal["recompute", "rollout"] = Field(
        default="recompute", description="recompute with the actor (verl's default) or use the rollout's."
    )
    tis_threshold: float | None = Field(
        default=None, gt=0.0, description="Truncated importance sampling cap against rollout logprobs."
    )


class OptimConfig(_Strict):
    """AdamW, mini-batches and micro-batches."""

    lr: float = Field(default=1e-6, gt=0.0)
    weight_decay: float = Field(default=0.01, ge=0.0)
    betas: tuple[float, float] = (0.9, 0.999)
    warmup_steps: int = Field(default=0, ge=0, description="Linear warm-up of the learning rate.")
    lr_schedule: Literal["constant", "cosine"] = Field(
        default="constant",
        description="constant (verl's default) or cosine: from lr down to lr x min_lr_ratio over the "
        "run's iterations (after the warm-up).",
    )
    min_lr_ratio: float = Field(
        default=0.0, ge=0.0, le=1.0, description="The cosine schedule's floor, as a fraction of lr."
    )
    grad_clip: float = Field(default=1.0, gt=0.0)
    ppo_epochs: int = Field(default=1, ge=1)
    mini_batch_rows: int | None = Field(
        default=None, ge=1, description="Step rows per optimizer step; null: the whole batch."
    )
    micro_batch_rows: int = Field(default=16, ge=1, description="Rows per forward/backward (accumulated).")
    shuffle: bool = Field(default=True, description="Shuffle rows before splitting into mini-batches.")


#: TimerPO's similarity: none (off), ot (Sinkhorn distance, the paper's) or clip (mean-pooled cosine).
GROUNDED_METHODS = ("none", "ot", "clip")


class GroundedSettings(_Strict):
    """TimerPO's grounded advantage (AnomSeer, arXiv 2602.08868; :mod:`envhub.algos.timerpo`).

    The policy's last-layer hidden states on each response and on its task's expert
    explanation (the env's ``EnvSpec.expert_cot``) give a score in [0, 1]; centred in its group,
    projected orthogonally to the GRPO advantage and weighted by ``adv_mix``, it is added to
    the row's advantage before the loss. The defaults are the authors' (``run_anomseer.sh``).
    """

    method: Literal["none", "ot", "clip"] = Field(
        default="none",
        description="none: plain advantages; ot: score exp(-W/tau) from the Sinkhorn distance W "
        "(the paper's); clip: the cosine of the mean-pooled states over clip_temperature.",
    )
    adv_mix: float = Field(
        default=0.3, allow_inf_nan=False, description="alpha: weight of the semantic advantage (ts.adv_mix)."
    )
    orth: bool = Field(
        default=True,
        description="Project the semantic advantage orthogonally to the main one within each group "
        "first (ts.use_sem_orth).",
    )
    ot_eps: float = Field(default=0.08, gt=0.0, allow_inf_nan=False, description="Sinkhorn's entropic eps.")
    ot_n_iter: int = Field(default=50, ge=1, description="Sinkhorn iterations.")
    tau: float = Field(
        default=0.5, gt=0.0, allow_inf_nan=False, description="Score temperature: exp(-W/tau)."
    )
    clip_temperature: float = Field(
        default=1.0,
        gt=0.0,
        allow_inf_nan=False,
        description="method clip: the cosine is divided by it (envhub's default; the notes give none).",
    )
    expert_max_tokens: int = Field(
        default=512, ge=1, description="The expert explanation's first tokens that the policy reads."
    )

    @property
    def enabled(self) -> bool:
        return self.method != "none"


class ValidationSettings(_Strict):
    """Periodic validation on the test split (verl-agent: T = 0.4, n = 1, seed + 1000)."""

    every: int = Field(default=0, ge=0, description="Validate every k iterations; 0 never.")
    before_training: bool = Field(
        default=False,
        description="Also validate the initial policy, as iteration 0 (verl-agent's val_before_train).",
    )
    split: str = "test"
    tasks: int = Field(default=32, ge=1)
    temperature: float = Field(default=0.4, ge=0.0)
    group_size: int = Field(default=1, ge=1)
    seed_offset: int = Field(default=1000, ge=0)
    blind_ceiling: bool = Field(
        default=False,
        description="Print the best observation-blind policy's success on these tasks "
        "(Sokoban, Search-QA, Math; envhub.train.blind).",
    )
    stop_at: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="End the run at the first validation whose val/success reaches this target: the "
        "run is checkpointed there and a resume trains no further. Null: run every iteration.",
    )

    @model_validator(mode="after")
    def _stop_needs_validation(self) -> ValidationSettings:
        if self.stop_at is not None and not self.every:
            raise ValueError(
                "validation.stop_at needs validation.every > 0 (it is checked at each validation)"
            )
        return self


class OutputConfig(_Strict):
    """Where the run writes and what it keeps."""

    run_dir: str = Field(default="runs/latest", description="Metrics, checkpoints, TensorBoard, plots.")
    checkpoint_every: int = Field(
        default=0, ge=0, description="Checkpoint every k iterations; 0: at the end."
    )
    keep_checkpoints: int = Field(default=2, ge=1)
    resume: bool = Field(default=True, description="Continue from the run dir's latest checkpoint.")
    tensorboard: bool = True
    wandb: bool = Field(default=False, description="Log to Weights & Biases too (needs wandb installed).")
    wandb_project: str = "envhub"
    progress: bool = Field(default=True, description="A rich progress display on a terminal.")
    save_groups: bool = Field(
        default=True,
        description="Write each iteration's groups to rollouts/iter_<k>.jsonl (what `envhub view` shows).",
    )


class WarmStartSettings(_Strict):
    """A supervised warm start before RL (``envhub-train warm-start``; :mod:`envhub.train.warm`).

    Scripted policies play the run's rollout (the orchestra and its prompts, the context, the step
    limit: the prompts the RL run's models will see) on ``split``; each call's response is a
    demonstration, and each model of the run (the top-level one, each ``agents.<role>`` one) is
    trained on its roles' demonstrations with token cross-entropy on the response. ``envhub-train``
    itself never reads this section: the warm start writes models that a run then starts from.
    """

    policy: str | None = Field(
        default=None,
        description="The scripted policy ('scripted:<module>:<callable>') that plays every role "
        "policies leaves out (or the single agent).",
    )
    policies: dict[str, str] = Field(
        default_factory=dict,
        description="Role -> its scripted policy (needs rollout.agents).",
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Role -> the scripted policy ('scripted:<module>:<callable>') whose answer to "
        "each of the role's played prompts is the response trained on, in place of the one played. "
        "A label blind to the observation teaches the role its format and none of its decision: the "
        "Dr. MAS recipe's verifier (envhub.envs.search.policy:coin_verifier), whose routing RL learns.",
    )
    split: str = Field(default="train", description="The split played; never validation.split.")
    tasks: int | None = Field(default=None, ge=1, description="The split's first N tasks; null: all.")
    group_size: int = Field(default=1, ge=1, le=64, description="Episodes per task.")
    successful_only: bool = Field(
        default=True,
        description="Keep only the calls of won episodes (filtered behaviour cloning).",
    )
    epochs: int = Field(default=4, ge=1, description="Passes over the demonstrations.")
    model_epochs: dict[str, int] = Field(
        default_factory=dict,
        description="Model name (shared, or an agents.<role> one) -> its passes, over epochs: a "
        "verifier that learns its two words in one pass need not take the search agent's eight.",
    )
    lr: float = Field(default=1.0e-3, gt=0.0, allow_inf_nan=False, description="AdamW learning rate.")
    weight_decay: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    batch_rows: int = Field(default=8, ge=1, description="Demonstrations per optimizer step.")
    grad_clip: float = Field(default=1.0, gt=0.0, allow_inf_nan=False)

    @field_validator("policy")
    @classmethod
    def _scripted_policy(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("scripted:"):
            raise ValueError("warm_start.policy must be 'scripted:<module>:<callable>'")
        return value

    @field_validator("model_epochs")
    @classmethod
    def _positive_epochs(cls, value: dict[str, int]) -> dict[str, int]:
        bad = sorted(name for name, epochs in value.items() if epochs < 1)
        if bad:
            raise ValueError(f"warm_start.model_epochs.{bad[0]} must be at least 1")
        return value

    def epochs_of(self, model: str) -> int:
        """The passes ``model`` (a name of :func:`~envhub.train.warm.warm_start`'s) trains for."""
        return self.model_epochs.get(model, self.epochs)

    @field_validator("policies", "labels")
    @classmethod
    def _scripted_policies(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        bad = sorted(role for role, spec in value.items() if not spec.startswith("scripted:"))
        if bad:
            raise ValueError(f"warm_start.{info.field_name}.{bad[0]} must be 'scripted:<module>:<callable>'")
        return value


#: The name of the top-level model in a multi-agent run: it plays every role ``agents:`` leaves out.
SHARED_POLICY = "shared"


class AgentPolicyConfig(_Strict):
    """One agent's own model and optimizer (Dr. MAS: a model per agent), under ``agents.<role>``.

    Each section is the top-level one with the keys given here over it: ``agents: {verifier:
    {model: {path: DIR}, optim: {lr: 1e-5, micro_batch_rows: 4}}}`` trains a model of its own
    for the verifier, with the run's ``model`` and ``optim`` settings but these. With
    ``adapter: true`` the agent is instead a LoRA adapter of its own on the top-level model (one
    base in memory; the top-level ``model.lora`` gives its shape, ``model: {lora: ...}`` here
    another). Under ``rollout.generation: openai`` an agent with a model of its own samples from
    a server of its own, ``policy`` (the endpoint spec of ``rollout.policy``).
    """

    model: ModelConfig = Field(description="The agent's model: the top-level model keys, these over them.")
    optim: OptimConfig = Field(
        description="The agent's optimizer: the top-level optim keys, these over them."
    )
    adapter: bool = Field(
        default=False,
        description="A LoRA adapter of its own on the top-level model (needs model.lora) instead of "
        "a model of its own.",
    )
    policy: PolicyEndpoint | None = Field(
        default=None,
        description="rollout.generation: openai: the OpenAI-compatible server (vLLM) that serves this "
        "agent's model, whole as rollout.policy is (base_url and model; tokenizer, default the agent's "
        "model.path; max_concurrency, timeout_s). The trainer samples the agent's calls there and "
        "pushes its weights into it; its key comes from ENVHUB_POLICY_API_KEY.",
    )


def _inherit(data: Any) -> Any:
    """``agents.<role>.model`` / ``.optim``: the top-level section with the role's keys over it."""
    if not isinstance(data, dict) or not isinstance(data.get("agents"), dict):
        return data
    agents: dict[str, Any] = {}
    for role, spec in data["agents"].items():
        spec = {} if spec is None else spec
        if isinstance(spec, BaseModel):
            spec = spec.model_dump()
        if not isinstance(spec, dict):
            agents[role] = spec  # refused by the section's own validation
            continue
        merged = dict(spec)
        for key in ("model", "optim"):
            top = data.get(key)
            top = top.model_dump() if isinstance(top, BaseModel) else dict(top or {})
            own = spec.get(key)
            if own is None:
                own = {}
            if isinstance(own, BaseModel):
                own = own.model_dump(exclude_unset=True)
            merged[key] = {**top, **own} if isinstance(own, dict) else own
        agents[role] = merged
    return {**data, "agents": agents}


class TrainConfig(_Strict):
    """One training run."""

    algo: Algo = Field(default="gigpo", description="Advantage estimator.")
    env: str = Field(description="Env id or family name (envhub.envs.resolve).")
    iterations: int = Field(default=100, ge=1, description="Training iterations (rollout + update).")
    seed: int = Field(default=0, ge=0)
    max_staleness: int = Field(
        default=0,
        ge=0,
        description="Policy versions a group may lag (admission, and again when it is trained on: older "
        "groups are dropped and counted); 0 is the synchronous loop.",
    )
    advantage: dict[str, Any] = Field(
        default_factory=dict, description="Estimator settings over the env's reference defaults."
    )
    model: ModelConfig
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    loss: LossConfig = Field(default_factory=LossConfig)
    grounded: GroundedSettings = Field(
        default_factory=GroundedSettings, description="TimerPO's grounded advantage (off by default)."
    )
    optim: OptimConfig = Field(default_factory=OptimConfig)
    agents: dict[str, AgentPolicyConfig] = Field(
        default_factory=dict,
        description="Dr. MAS: a model of its own per agent (role -> its model and optim keys over the "
        "top-level ones); roles left out share the top-level model. Needs rollout.agents.",
    )
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    output: OutputConfig = Field(default_factory=OutputConfig)
    warm_start: WarmStartSettings | None = Field(
        default=None,
        description="A supervised warm start from scripted demonstrations (envhub-train warm-start); "
        "the RL run does not read it.",
    )

    @model_validator(mode="before")
    @classmethod
    def _agent_sections(cls, data: Any) -> Any:
        return _inherit(data)

    def policy_of(self, role: str) -> str:
        """The policy that plays (and trains on) ``role``: the role's own, or :data:`SHARED_POLICY`."""
        return role if role in self.agents else SHARED_POLICY

    def base_of(self, role: str) -> str:
        """The model whose weights ``role`` samples from: the role's own, or :data:`SHARED_POLICY`
        for a role without one and for an adapter on the top-level model (``adapter: true``)."""
        spec = self.agents.get(role)
        return role if spec is not None and not spec.adapter else SHARED_POLICY

    @field_validator("advantage")
    @classmethod
    def _advantage_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        return dict(value)

    @model_validator(mode="after")
    def _checks(self) -> TrainConfig:
        from envhub.algos import default_config

        try:  # unknown estimator keys or values fail here, not at the first update
            default_config(self.algo, None, **self.advantage)
        except (ConfigurationError, TypeError) as exc:
            raise ValueError(f"advantage: {exc}") from None
        if self.loss.old_logprobs == "rollout" and self.rollout.generation == "transformers":
            pass  # the in-process sampler records processed logprobs: usable as old logprobs
        problems = (
            _served_problems(self) + _agent_problems(self) + _env_problems(self) + _warm_start_problems(self)
        )
        if problems:
            raise ValueError("; ".join(problems))
        if self.grounded.enabled:
            self._check_grounded()
        if self.loss.entropy == "coso":
            if self.loss.entropy_coef == 0:
                raise ValueError(
                    "loss.entropy='coso' weights the entropy bonus, and loss.entropy_coef=0 turns it "
                    "off; set entropy_coef > 0 (the authors use 1.0) or entropy='plain'."
                )
            if self.rollout.trajectory_mode:
                raise ValueError(
                    "loss.entropy='coso' needs one action per row (step rows); trajectory_mode "
                    "rows hold a whole episode. Use entropy='plain' or step rows."
                )
        if self.loss.tis_threshold is not None and self.loss.old_logprobs == "rollout":
            raise ValueError(
                "loss.tis_threshold corrects recomputed old logprobs against the rollout's; with "
                "loss.old_logprobs='rollout' they are the same. Use old_logprobs='recompute'."
            )
        return self

    def _check_grounded(self) -> None:
        problems = _grounded_problems(self)
        if problems:
            raise ValueError(f"grounded.method={self.grounded.method!r}: " + "; ".join(problems))


#: The estimators Dr. MAS defines agent-wise advantages for (its GRPO and GiGPO; envhub's HGPO
#: windows and GraphGPO's graph read one row per env step).
AGENT_WISE_ALGOS = ("grpo", "gigpo")


def _agent_problems(config: TrainConfig) -> list[str]:
    """What is wrong with the run's multi-agent settings (Dr. MAS; empty: nothing)."""
    agents = config.rollout.agents
    problems = []
    if config.advantage.get("group_by_agent") and agents is None:
        problems.append(
            "advantage.group_by_agent: true normalises within (task, agent) groups, but rollout.agents "
            "declares no orchestra, so every row has the same agent; declare rollout.agents (e.g. "
            "{orchestra: search}) or drop the key"
        )
    if agents is not None and config.algo not in AGENT_WISE_ALGOS:
        problems.append(
            f"rollout.agents: algo {config.algo!r} reads one row per env step; multi-agent rows "
            f"(several calls per env step) take {' or '.join(AGENT_WISE_ALGOS)}"
        )
    if agents is not None and config.model.strategy == "fsdp2":
        # The learner puts one agent in each micro-batch, so ranks can run different numbers of
        # sharded forward passes, and FSDP2's collectives would wait on each other forever.
        problems.append(
            "rollout.agents: model.strategy='fsdp2' needs every rank to run the same micro-batches, "
            "and multi-agent rows split them by agent; use strategy 'ddp'"
        )
    if agents is not None and agents.policies:
        problems.append(
            "rollout.agents.policies: the trainer samples every role from a model it trains; a model "
            "per agent is the top-level agents section (agents: {<role>: {model: {path: ...}, optim: "
            "{lr: ...}}}); leave rollout.agents.policies out"
        )
    if config.agents:
        problems.extend(_own_model_problems(config))
    return problems


def _own_model_problems(config: TrainConfig) -> list[str]:
    """What stops ``agents`` (a model per agent) from working with the rest of ``config``."""
    agents, rollout = config.rollout.agents, config.rollout
    if agents is None:
        return [
            "agents: a model per agent needs rollout.agents (the orchestra whose roles they play, "
            "e.g. {orchestra: search})"
        ]
    problems = [
        f"agents.{role}: not a role of the {agents.orchestra} orchestra ({', '.join(agents.roles)})"
        for role in config.agents
        if role not in agents.roles
    ]
    if rollout.rollout_service:
        problems.append(
            "agents: a rollout service samples one served model; a model per agent samples in this "
            "process, or from a server of its own (rollout.generation: openai with agents.<role>.policy); "
            "leave rollout.rollout_service out"
        )
    if config.loss.entropy == "coso":
        problems.append(
            "agents: loss.entropy='coso' trains one classifier over one model; use entropy='plain'"
        )
    if config.grounded.enabled:
        problems.append("agents: grounded reads one model's hidden states; leave grounded off")
    if config.model.strategy != "fsdp2":  # else refused for rollout.agents above
        problems.extend(
            f"agents.{role}.model.strategy='fsdp2': under torchrun an agent's own model is data "
            "parallel by DDP, as the shared one is with rollout.agents; leave the key out or set 'ddp'"
            for role, spec in config.agents.items()
            if spec.model.strategy == "fsdp2"
        )
    for role, spec in config.agents.items():
        if not spec.adapter:
            continue
        if config.model.lora is None:
            problems.append(
                f"agents.{role}.adapter: a LoRA adapter on the top-level model needs model.lora "
                "(the shared model is then a LoRA model too)"
            )
            continue
        top, own = config.model.model_dump(exclude={"lora"}), spec.model.model_dump(exclude={"lora"})
        problems.extend(
            f"agents.{role}.model.{key}: an adapter shares the top-level model, so only its lora "
            f"keys may differ (top-level {top[key]!r}, here {own[key]!r})"
            for key in top
            if top[key] != own[key]
        )
    return problems


def _served_problems(config: TrainConfig) -> list[str]:
    """What is wrong with the run's served models (``generation: openai``; empty: nothing).

    Each served model has a server of its own: the shared model ``rollout.policy_url``, each
    agent with a model of its own ``agents.<role>.policy``. Two models on one server cannot be:
    a push reloads the whole server's weights.
    """
    rollout = config.rollout
    served = rollout.generation == "openai"
    problems = [
        f"agents.{role}.policy names a served model, which rollout.generation='transformers' "
        "(sampling in this process) does not use: set rollout.generation: openai, or leave "
        f"agents.{role}.policy out"
        for role, spec in config.agents.items()
        if spec.policy is not None and not served
    ]
    problems.extend(
        f"agents.{role}.policy.api_key: a recipe carries no secrets; set ENVHUB_POLICY_API_KEY instead"
        for role, spec in config.agents.items()
        if spec.policy is not None and spec.policy.api_key is not None
    )
    if not served:
        return problems
    for role, spec in config.agents.items():
        if spec.adapter:
            problems.append(
                f"agents.{role}.adapter: a LoRA adapter per agent samples in this process, not under "
                f"rollout.generation='openai'; give the agent a model of its own (agents.{role}.model) "
                f"and its server (agents.{role}.policy), or use generation: transformers"
            )
        elif spec.policy is None:
            problems.append(
                f"agents.{role}.policy: under rollout.generation='openai' an agent with a model of its "
                f"own samples from a server of its own; give agents.{role}.policy: {{base_url: <the "
                f"vLLM server of agents.{role}.model.path>, model: <its served name>}}"
            )
    roles = config.rollout.agents.roles if config.rollout.agents is not None else ()
    sharing = [role for role in roles if role not in config.agents] if roles else ["every role"]
    if sharing and not rollout.policy_url:
        problems.append(
            f"generation='openai' needs policy_url (the vLLM server's base URL) for the model that "
            f"plays {', '.join(sharing)}"
        )
    if not sharing and rollout.policy_url:
        problems.append(
            "rollout.policy_url: every role of the orchestra has a model and a server of its own "
            "(agents.<role>.policy), so nothing is sampled there; leave rollout.policy_url and "
            "rollout.policy out"
        )
    problems.extend(_shared_servers(config, top=bool(sharing)))
    return problems


#: Host names that reach this machine's own loopback (a server bound to 0.0.0.0 answers on each).
_LOOPBACK_HOSTS = frozenset({"localhost", "0.0.0.0", "::1", "::"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _server_root(url: str) -> str:
    """The server a URL reaches, as ``host:port/path`` (no trailing ``/`` or ``/v1``): two
    spellings of one server are equal. Host names are case-insensitive, a default port may be
    written or not, and ``localhost``, ``127.x.x.x``, ``::1`` and ``0.0.0.0`` are one host (a
    name another resolver maps elsewhere is not caught: that needs DNS)."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().rstrip(".")
    if host in _LOOPBACK_HOSTS or host.startswith("127."):
        host = "loopback"
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:  # not a port number: the pydantic URL check is not ours; compare as written
        return url.rstrip("/").removesuffix("/v1").rstrip("/")
    path = parts.path.rstrip("/").removesuffix("/v1").rstrip("/")
    return f"{host}:{port}{path}"


def _shared_servers(config: TrainConfig, *, top: bool) -> list[str]:
    """Two served models on one server (the shared model's, when ``top``, and the agents')."""
    owners: dict[str, str] = {}
    if top and config.rollout.policy_url:
        owners[_server_root(config.rollout.policy_url)] = "rollout.policy_url (the shared model)"
    problems = []
    for role, spec in config.agents.items():
        if spec.policy is None or spec.adapter:
            continue
        root = _server_root(spec.policy.base_url)
        if root in owners:
            problems.append(
                f"agents.{role}.policy.base_url {spec.policy.base_url!r} is also the server of "
                f"{owners[root]}: each model needs a server of its own (a push reloads the whole "
                "server's weights); start one vLLM server per model"
            )
        else:
            owners[root] = f"agents.{role}"
    return problems


def _warm_start_problems(config: TrainConfig) -> list[str]:
    """What is wrong with ``warm_start`` given the rest of the run (empty: nothing)."""
    warm, agents = config.warm_start, config.rollout.agents
    if warm is None:
        return []
    problems = []
    if warm.split == config.validation.split:
        problems.append(
            f"warm_start.split: {warm.split!r} is validation.split, whose tasks measure the run; "
            "demonstrations come from another split (train)"
        )
    for key, by_role in (("policies", warm.policies), ("labels", warm.labels)):
        if by_role and agents is None:
            problems.append(
                "warm_start.policies: a scripted policy per role needs rollout.agents (the orchestra); "
                "give warm_start.policy for a single agent"
                if key == "policies"
                else "warm_start.labels: labels per role need rollout.agents (the orchestra); leave it out"
            )
    if agents is None and (warm.policies or warm.labels):
        return problems
    roles = agents.roles if agents is not None else ()
    problems.extend(
        f"warm_start.{key}.{role}: not a role of the {agents.orchestra} orchestra ({', '.join(roles)})"
        for key, by_role in (("policies", warm.policies), ("labels", warm.labels))
        for role in by_role
        if agents is not None and role not in roles
    )
    models = {config.base_of(role) for role in roles} or {SHARED_POLICY}
    problems.extend(
        f"warm_start.model_epochs.{name}: not a model of this run ({', '.join(sorted(models))})"
        + (
            f"; agents.{name} is an adapter on the top-level model, whose passes it trains with"
            if name in config.agents and config.agents[name].adapter
            else ""
        )
        for name in sorted(warm.model_epochs)
        if name not in models
    )
    uncovered = [role for role in roles if role not in warm.policies]
    if warm.policy is None and (uncovered or agents is None):
        what = f"the roles {uncovered}" if agents is not None else "the agent"
        problems.append(
            f"warm_start: no scripted policy plays {what}; give warm_start.policy (every role left "
            "out) or warm_start.policies.<role>"
        )
    return problems


def _env_problems(config: TrainConfig) -> list[str]:
    """What the run asks of its env family that the family does not offer (empty: nothing)."""
    from envhub.envs import resolve
    from envhub.rollout.orchestra import ORCHESTRA_TYPES
    from envhub.train.blind import BLIND_CEILING_FAMILIES

    try:
        family = resolve(config.env).family
    except Exception:  # an unknown env is reported by the trainer, with its own message
        return []
    problems = []
    if config.validation.blind_ceiling and family not in BLIND_CEILING_FAMILIES:
        problems.append(
            f"validation.blind_ceiling: envhub computes it for {', '.join(BLIND_CEILING_FAMILIES)} "
            f"envs, not the {family} family; set it to false"
        )
    agents = config.rollout.agents
    if agents is not None and ORCHESTRA_TYPES[agents.orchestra][1] != family:
        plays = ORCHESTRA_TYPES[agents.orchestra][1]
        problems.append(
            f"rollout.agents: the {agents.orchestra} orchestra plays {plays} envs, not the {family} "
            f"family (env {config.env!r})"
        )
    return problems


def _grounded_problems(config: TrainConfig) -> list[str]:
    """What stops ``grounded`` from working with the rest of ``config`` (empty: nothing)."""
    from envhub.envs import resolve

    problems = []
    if config.algo != "grpo":
        problems.append(
            f"it mixes into GRPO-style per-sample advantages: set algo: grpo (got {config.algo!r})"
        )
    try:
        spec = resolve(config.env)
    except Exception as exc:  # an unknown env is reported by the trainer; say why here too
        problems.append(f"env {config.env!r} cannot be resolved ({exc})")
    else:
        if spec.expert_cot is None:
            problems.append(
                f"env {spec.id} gives no expert explanation (its EnvSpec.expert_cot is unset); "
                "envhub/TimeSeries-v0 has one"
            )
    if config.loss.old_logprobs != "recompute":
        problems.append(
            "the hidden states come from the pass that recomputes old logprobs: "
            "set loss.old_logprobs: recompute"
        )
    if config.rollout.trajectory_mode:
        problems.append("it scores step rows: trajectory_mode is not supported")
    if config.model.strategy == "fsdp2":
        problems.append("the expert pass is not a collective: use model.strategy: ddp")
    return problems


def load_config(
    path: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    sets: Sequence[tuple[str, Any]] = (),
) -> TrainConfig:
    """Read a recipe (YAML), apply dotted-key overrides, then ``sets``, validate.

    Args:
        path: a YAML recipe (``trainers/*.yaml``), or None for overrides only.
        overrides: ``{"iterations": 2, "loss.kl_coef": 0.0, "model.path": "..."}``; None values
            are ignored (an option the CLI did not get).
        sets: ``(key, value)`` pairs applied last, in order, None included: the CLI's
            ``--set key=null`` puts a null in the key (``--set rollout.sampling_seed=null``
            unsets the recipe's seed).

    Raises:
        ConfigurationError: the file is missing or not a mapping, or a key or value is wrong
            (the message names every bad key and what it accepts).
    """
    import yaml

    data: dict[str, Any] = {}
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigurationError(
                f"Recipe {str(file)!r} does not exist; the shipped ones are in trainers/*.yaml.",
                path=str(file),
            )
        loaded = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ConfigurationError(f"Recipe {str(file)!r} must be a YAML mapping.", path=str(file))
        data = loaded
    rollout = data.get("rollout")
    if isinstance(rollout, dict):
        # The recipe's shorthands become nested fields first, so an override (the later layer)
        # wins whichever form either of them uses.
        try:
            data["rollout"] = nest_shorthands(rollout)
        except ValueError as exc:
            raise ConfigurationError(f"Invalid recipe {str(path)!r}:\n  {exc}", path=str(path)) from None
    for key, value in (overrides or {}).items():
        if value is not None:
            set_path(data, _nested_key(key), value)
    for key, value in sets:
        set_path(data, _nested_key(key), value)
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(_explain(exc, path), errors=_error_list(exc)) from None


def _nested_key(dotted: str) -> str:
    """``rollout.temperature`` -> ``rollout.sampling.temperature`` (other keys unchanged)."""
    head, _, key = dotted.partition(".")
    if head != "rollout" or key not in ROLLOUT_SHORTHANDS:
        return dotted
    section, field = ROLLOUT_SHORTHANDS[key]
    return f"rollout.{section}" if field is None else f"rollout.{section}.{field}"


def _error_list(exc: ValidationError) -> list[dict[str, str]]:
    return [{"key": ".".join(str(p) for p in e["loc"]) or "(root)", "error": e["msg"]} for e in exc.errors()]


def _explain(exc: ValidationError, path: str | Path | None) -> str:
    where = f"recipe {str(path)!r}" if path else "the training options"
    lines = []
    for e in exc.errors():
        key = ".".join(str(p) for p in e["loc"]) or "(root)"
        if e["type"] == "extra_forbidden":
            lines.append(
                f"  {key}: unknown key (check its spelling; `envhub-train --help` lists the options)"
            )
        elif e["type"] == "missing":
            lines.append(f"  {key}: required (set it in the recipe or on the command line)")
        else:
            lines.append(f"  {key}: {e['msg']} (got {redact(e.get('input'))!r})")
    return f"Invalid {where}:\n" + "\n".join(lines)
