"""Kubernetes object names derived from any model name.

A model name may hold capitals, underscores, dots, spaces or any unicode
(`chicago_taxi`, `Churn Model`, `modèle`); Kubernetes takes none of those in an
object name. `instance_name` turns a model name into a DNS-1035 label
(`[a-z]([-a-z0-9]*[a-z0-9])?`), the strictest rule any of our objects has
(Services need it; Deployments, ConfigMaps, PVCs and HPAs take DNS-1123 names,
which every DNS-1035 label is). It is deterministic, and whenever the name had
to change (lower-cased, characters replaced, cut to length) it ends with 8 hex
digits of the SHA-256 of the model name, so `chicago_taxi` and `chicago-taxi`
never share objects. The TensorFlow Serving model name itself is unchanged.

Example:
    >>> instance_name("penguins")
    'penguins'
    >>> instance_name("chicago_taxi")
    'chicago-taxi-bdcd47c7'
    >>> object_name("chicago_taxi", "serving")
    'chicago-taxi-bdcd47c7-serving'
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["MAX_SUFFIX_LENGTH", "MAX_INSTANCE_LENGTH", "instance_name", "object_name"]

DNS1035_LABEL_MAX = 63
MAX_SUFFIX_LENGTH = len("-serving-config")
MAX_INSTANCE_LENGTH = DNS1035_LABEL_MAX - MAX_SUFFIX_LENGTH
_HASH_LENGTH = 8
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def instance_name(model_name: str) -> str:
    """The DNS-1035 label that names a model's Kubernetes objects.

    Args:
        model_name: The TensorFlow Serving model name, any non-empty string.

    Returns:
        `model_name` itself when it is already a DNS-1035 label of at most
        `MAX_INSTANCE_LENGTH` characters; otherwise its ASCII, lower-case,
        dash-separated form (prefixed `model-` when it does not start with a
        letter), cut to fit, plus `-` and 8 hex digits of its SHA-256.

    Raises:
        ValueError: `model_name` is empty.
    """
    if not model_name:
        raise ValueError(
            "Invalid model name for Kubernetes objects. Expected a non-empty model name. "
            "Received: model_name=''. Pass the name the model is served under, e.g. 'penguins'."
        )
    if len(model_name) <= MAX_INSTANCE_LENGTH and _DNS1035_LABEL.fullmatch(model_name):
        return model_name
    ascii_name = unicodedata.normalize("NFKD", model_name).encode("ascii", "ignore").decode("ascii").lower()
    stem = re.sub(r"[^a-z0-9]+", "-", ascii_name).strip("-")
    if not stem[:1].isalpha():
        stem = f"model-{stem}".rstrip("-")
    digest = hashlib.sha256(model_name.encode("utf-8")).hexdigest()[:_HASH_LENGTH]
    stem = stem[: MAX_INSTANCE_LENGTH - _HASH_LENGTH - 1].rstrip("-")
    return f"{stem}-{digest}"


def object_name(model_name: str, suffix: str) -> str:
    """`instance_name(model_name)-suffix`, a DNS-1035 label of at most 63 characters.

    Args:
        model_name: The TensorFlow Serving model name.
        suffix: What the object is (`serving`, `serving-config`, `models`): a
            DNS-1035 label of at most `MAX_SUFFIX_LENGTH - 1` characters.

    Returns:
        The object name.

    Raises:
        ValueError: `model_name` is empty, or `suffix` is too long or not a DNS-1035 label.
    """
    if len(suffix) + 1 > MAX_SUFFIX_LENGTH or not _DNS1035_LABEL.fullmatch(suffix):
        raise ValueError(
            f"Invalid Kubernetes object suffix. Expected a DNS-1035 label of at most {MAX_SUFFIX_LENGTH - 1} "
            f"characters ([a-z]([-a-z0-9]*[a-z0-9])?). Received: suffix={suffix!r}. Use a shorter lower-case suffix."
        )
    return f"{instance_name(model_name)}-{suffix}"
