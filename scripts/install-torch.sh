#!/usr/bin/env bash
# Install torch into a virtualenv before anything that depends on it, so that no dependency picks
# another build. The version is the range pyproject.toml's `train` extra gives (never a pin);
# which build comes from pip's own configuration, in this order:
#   1. a wheel in pip's local sources (`find-links` in pip.conf or PIP_FIND_LINKS), e.g. a CPU
#      wheel a machine keeps on disk: `pip install --no-index --no-deps`, so that an index's
#      newer (CUDA) build cannot win over it;
#   2. otherwise the index pip is configured with. PyPI's Linux torch is the CUDA build; for the
#      CPU one, point pip at PyTorch's CPU index first (PIP_INDEX_URL or pip.conf).
# A torch that already satisfies the range is kept.
#
#   bash scripts/install-torch.sh VENV_PYTHON
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:?usage: install-torch.sh VENV_PYTHON}"
SPEC="$("$PY" - "$ROOT/pyproject.toml" <<'EOF'
import re, sys, tomllib
extras = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]
print(next(r for r in extras["train"] if re.match(r"torch\b", r)))
EOF
)"
if "$PY" -c 'import torch' 2>/dev/null; then
  echo "install-torch: torch $("$PY" -c 'import torch; print(torch.__version__)') is installed; pip keeps it if it satisfies $SPEC" >&2
fi
echo "install-torch: installing $SPEC: a wheel from pip's local sources (find-links) if it has one, else from its index" >&2
if ! "$PY" -m pip install -q --no-index --no-deps "$SPEC" 2>/dev/null; then
  "$PY" -m pip install -q "$SPEC"
fi
# torch's own dependencies (sympy, networkx, ...) from the index; torch itself stays.
"$PY" -m pip install -q "$SPEC"
echo "install-torch: torch $("$PY" -c 'import torch; print(torch.__version__, "CUDA" if torch.version.cuda else "CPU")')" >&2
