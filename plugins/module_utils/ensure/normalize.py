# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What a manifest becomes before it is sent, and the compare-before-write test.

The body sent to the server is the manifest without server-set fields, with label-like maps made of
strings, a Secret's ``stringData`` encoded into ``data`` (what the server
stores) and the collection's managed-by and owner labels. ``matches`` decides
whether the object on the server already holds every field of that body; the
server's own normalisations (quantities written ``1000m`` stored as ``1``,
zero values it omits) are not differences.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
from decimal import Decimal, InvalidOperation

from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import object_contains, strip_server_fields
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import normalize_label_value

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.common import _encode_stringdata
except ImportError:  # pragma: no cover - kubernetes.core is a dependency; reported by common.new_module
    _encode_stringdata = None

OWNER_LABEL = "gpuops.cluster/owner"
# Maps whose values Kubernetes wants as strings, wherever they appear (YAML gives true / 1).
STRING_MAPS = frozenset(["labels", "annotations", "matchLabels", "nodeSelector"])
STRING_MAP_KINDS = {"ConfigMap": "data", "Secret": "stringData"}
# Maps of resource quantities (containers' limits/requests, ResourceQuota hard, ...).
QUANTITY_MAPS = frozenset(["limits", "requests", "hard", "capacity", "allocatable"])
QUANTITY_FIELDS = frozenset(["sizeLimit", "storage"])
QUANTITY_RE = re.compile(
    r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$"
)
SUFFIXES = dict((suffix, Decimal(10) ** exp) for suffix, exp in zip("numkMGTPE", (-9, -6, -3, 3, 6, 9, 12, 15, 18)))
SUFFIXES.update((suffix + "i", Decimal(2) ** (10 * n)) for n, suffix in enumerate("KMGTPE", 1))


def _stringify_map(value):
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        try:
            out[key] = normalize_label_value(item)
        except TypeError:  # a nested value: left for the server to reject with its own message
            out[key] = item
    return out


def _walk(obj, entry):
    """A copy of ``obj`` where each dict entry becomes ``entry(key, value)`` (value walked first)."""
    if isinstance(obj, list):
        return [_walk(item, entry) for item in obj]
    if not isinstance(obj, dict):
        return obj
    return dict((key, entry(key, _walk(value, entry))) for key, value in obj.items())


def _string_entry(key, value):
    return _stringify_map(value) if key in STRING_MAPS else value


def stringify_maps(obj):
    """A copy of ``obj`` where every label-like map holds strings (``true`` -> ``"true"``)."""
    return _walk(obj, _string_entry)


def prepare(manifest, owner=None):
    """The body to send: strings where Kubernetes wants strings, and our labels.

    Fields only the server sets (status, uid, resourceVersion, managedFields,
    ...) are dropped: a manifest saved with ``kubectl get -o yaml`` would
    otherwise never match, and its stale resourceVersion would make the apply
    fail with a conflict.
    """
    body = stringify_maps(strip_server_fields(manifest))
    data_key = STRING_MAP_KINDS.get(body.get("kind"))
    if data_key and isinstance(body.get(data_key), dict):
        body[data_key] = _stringify_map(body[data_key])
    if body.get("kind") == "Secret" and isinstance(body.get("stringData"), dict) and _encode_stringdata:
        body = _encode_stringdata(body)
    labels = body["metadata"].setdefault("labels", {}) or {}
    labels[MANAGED_BY_LABEL] = MANAGED_BY
    if owner:
        labels[OWNER_LABEL] = owner
    body["metadata"]["labels"] = labels
    return body


def quantity(value):
    """A Kubernetes quantity ("1500m", "1Gi", 2, "1e3") as a Decimal, or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    match = QUANTITY_RE.match(str(value).strip())
    if not match:
        return None
    try:
        number = Decimal(match.group(1))
    except InvalidOperation:
        return None
    if match.group(2):
        return number * (Decimal(10) ** int(match.group(2)[1:]))
    if match.group(3):
        return number * SUFFIXES[match.group(3)]
    return number


def _canon_quantity(value):
    number = quantity(value)
    return value if number is None else number.normalize()


def _quantity_entry(key, value):
    if key in QUANTITY_MAPS and isinstance(value, dict):
        return dict((k, _canon_quantity(v)) for k, v in value.items())
    if key in QUANTITY_FIELDS and not isinstance(value, (dict, list)):
        return _canon_quantity(value)
    return value


def canonical(obj):
    """A copy of ``obj`` with resource quantities as numbers, so 1, "1" and "1000m" compare equal."""
    return _walk(obj, _quantity_entry)


def _zero(value):
    return value is None or value is False or (not isinstance(value, bool) and value in (0, "", {}, []))


def drop_omitted(desired, existing):
    """``desired`` without the zero values (null, false, 0, "", {}, []) that ``existing`` lacks.

    The API server omits empty fields when it stores an object (Go's
    ``omitempty``): ``hostNetwork: false`` or ``annotations: {}`` in a manifest
    are never read back, and must not count as differences.
    """
    if isinstance(desired, dict) and isinstance(existing, dict):
        out = {}
        for key, value in desired.items():
            if key not in existing:
                if not _zero(value):
                    out[key] = copy.deepcopy(value)
                continue
            out[key] = drop_omitted(value, existing[key])
        return out
    if isinstance(desired, list) and isinstance(existing, list) and len(desired) == len(existing):
        return [drop_omitted(d, e) for d, e in zip(desired, existing)]
    return copy.deepcopy(desired)


def matches(existing, body):
    """True when the object on the server already holds every field of ``body`` (no write needed)."""
    if existing is None:
        return False
    current = canonical(existing)
    return object_contains(current, drop_omitted(canonical(body), current))
