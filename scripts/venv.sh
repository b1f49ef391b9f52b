# Sourced by examples/demo.sh and scripts/test.sh (the README's two commands): the virtual
# environment they run in, with this checkout installed into it.
#
#   assay_venv EXTRA   sets ASSAY_ROOT (this checkout), VENV (ASSAY_VENV or <checkout>/.venv,
#                      created when missing, by ASSAY_PYTHON or else the `python3` on PATH) and
#                      exports PYTHONPATH so that this checkout's code is the code that runs.
#
# The checkout is installed into the environment (editable, with EXTRA) unless the environment
# already holds an editable install of another checkout: re-pointing that install would silently
# change the code every other user of the environment runs. Then its packages are used as they
# are, and PYTHONPATH (searched before site-packages) makes this checkout's code the one imported.

assay_venv() {
  local extra="$1"
  ASSAY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  VENV="${ASSAY_VENV:-$ASSAY_ROOT/.venv}"
  if [ ! -x "$VENV/bin/python" ]; then
    "${ASSAY_PYTHON:-python3}" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
  fi
  local installed_from
  installed_from="$("$VENV/bin/python" - <<'PY' 2>/dev/null || true
import importlib.metadata as md, json
try:
    info = json.loads(md.distribution("assay").read_text("direct_url.json") or "{}")
except md.PackageNotFoundError:
    info = {}
if info.get("dir_info", {}).get("editable"):
    print(info.get("url", "").removeprefix("file://"))
PY
)"
  if [ -n "$installed_from" ] && [ "$(cd "$installed_from" 2>/dev/null && pwd)" != "$ASSAY_ROOT" ]; then
    echo "note: $VENV has assay installed from $installed_from; running this checkout ($ASSAY_ROOT) with that environment's packages, left as they are." >&2
  else
    "$VENV/bin/python" -m pip install --quiet -e "$ASSAY_ROOT[$extra]"
  fi
  export PYTHONPATH="$ASSAY_ROOT/generator:$ASSAY_ROOT/sqlmesh_macros${PYTHONPATH:+:$PYTHONPATH}"
}
