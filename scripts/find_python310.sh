#!/usr/bin/env bash
# Prints the path of a Python 3.10 interpreter, or explains how to get one.
# TFX 1.16 (the newest whose dependencies all install here) needs Python 3.10.
set -u
candidates=("${PYTHON310:-}" "$(command -v python3.10 2>/dev/null)")
if command -v pyenv >/dev/null 2>&1; then
  for version in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.10(\.|$)' | sort -rV); do
    candidates+=("$(pyenv root)/versions/$version/bin/python3.10")
  done
fi
for dir in "$HOME"/.pyenv/versions/3.10*/bin /usr/local/bin /usr/bin; do
  candidates+=("$dir/python3.10")
done
for python in "${candidates[@]}"; do
  if [ -n "$python" ] && [ -x "$python" ] && "$python" -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then
    echo "$python"
    exit 0
  fi
done
cat >&2 <<'MSG'
error: Python 3.10 not found. TFX 1.16 needs exactly Python 3.10.
Install it, then run the command again:
  with pyenv:   pyenv install 3.10.13
  on Debian:    apt-get install python3.10 python3.10-venv   (where the release packages it)
or point to one: PYTHON310=/path/to/python3.10 make test
MSG
exit 1
