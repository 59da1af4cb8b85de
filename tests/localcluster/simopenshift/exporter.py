# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated dcgm-exporter: ``/metrics`` and ``/health`` of one node's GPUs.

The exposition is dcgm-exporter's own (internal/pkg/rendermetrics/render_metrics.go
and internal/pkg/collector/gpu_collector.go of github.com/NVIDIA/dcgm-exporter):

    # HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
    # TYPE DCGM_FI_DEV_GPU_TEMP gauge
    DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-...",pci_bus_id="00000000:00:1E.0",device="nvidia0",modelName="Tesla T4",...} 34

    (``...``: ``Hostname="gpu-0",DCGM_FI_DRIVER_VERSION="550.90.07",container="c",namespace="ns",pod="p"``)

* counters: the image's ``/etc/dcgm-exporter/default-counters.csv`` (copy of the
  4.5.3-4.8.2 file in ``data/dcgm-exporter-default-counters.csv``), or the file
  named by ``DCGM_EXPORTER_COLLECTORS`` / ``-f`` / ``--collectors`` when it comes
  from a mounted ConfigMap; ``label`` rows (``DCGM_FI_DRIVER_VERSION``) become
  labels, sorted by name like Go's template ``range`` over a map;
* the host label is ``Hostname`` up to 4.5.3-4.8.2 and ``hostname`` after it
  (commit d5e5f51); its value is env ``NODE_NAME`` (the GPU Operator sets it from
  ``spec.nodeName``), else the container's host name: the node with
  ``hostNetwork``, else the pod name; ``--no-hostname`` /
  ``DCGM_EXPORTER_NO_HOSTNAME`` drops it;
* ``DCGM_EXPORTER_USE_OLD_NAMESPACE`` writes ``uuid`` instead of ``UUID``;
* one set of series per physical GPU; a MIG-enabled GPU gives one set per GPU
  instance (same gpu/UUID, plus ``GPU_I_PROFILE``/``GPU_I_ID``), as the "flex"
  device selection does; time-slicing does not multiply anything;
* with ``DCGM_EXPORTER_KUBERNETES=true`` (``-k``) the series of a GPU allocated to
  a pod carry ``container``, ``namespace`` and ``pod`` (attributes, after the labels);
* integer fields print as integers, double fields with Go's ``%f`` (six decimals).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import hashlib
import logging
import math
import os
import re
import threading
import time

try:  # Python 3
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from socketserver import ThreadingMixIn
except ImportError:  # pragma: no cover
    from BaseHTTPServer import BaseHTTPRequestHandler, HTTPServer  # noqa
    from SocketServer import ThreadingMixIn  # noqa

from simopenshift import catalog
from simopenshift.gpustack import POWER_CAP_W

LOG = logging.getLogger("simopenshift.exporter")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
DEFAULT_COUNTERS_PATH = "/etc/dcgm-exporter/default-counters.csv"
DEFAULT_PORT = 9400
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# dcgm-exporter renamed the Hostname label to hostname after this release (d5e5f51).
LAST_CAPITAL_HOSTNAME = (4, 5, 3)

# Fields DCGM reports as doubles (printed "%f"); every other numeric field is an int64.
DOUBLE_FIELDS = frozenset(
    [
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_POWER_USAGE_INSTANT",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "DCGM_FI_PROF_SM_ACTIVE",
        "DCGM_FI_PROF_SM_OCCUPANCY",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
        "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
        "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
    ]
)
# SM / memory clock ceilings (MHz) of the simulated products (NVIDIA data sheets).
CLOCKS_MHZ = {
    "Tesla-T4": (1590, 5000),
    "Tesla-K80": (875, 2505),
    "Tesla-M60": (1178, 2505),
    "NVIDIA-L4": (2040, 6251),
    "NVIDIA-L40S": (2520, 9001),
    "NVIDIA-A10G": (1710, 6251),
    "NVIDIA-A10": (1695, 6251),
    "NVIDIA-A100-SXM4-40GB": (1410, 1215),
    "NVIDIA-A100-SXM4-80GB": (1410, 1593),
    "NVIDIA-A100-80GB-PCIe": (1410, 1512),
    "NVIDIA-H100-80GB-HBM3": (1980, 2619),
    "NVIDIA-H200": (1980, 3201),
}


class Counter(object):
    def __init__(self, field, prom_type, help_text):
        self.field = field
        self.prom_type = prom_type
        self.help = help_text

    def __repr__(self):
        return "Counter(%r, %r)" % (self.field, self.prom_type)


def parse_counters(text):
    """Counters of a dcgm-exporter CSV (``field, type, help``; ``#`` lines are comments).

    Raises ValueError for a row the exporter refuses (fewer than 3 columns, unknown type).
    """
    out = []
    for number, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) != 3:
            raise ValueError("line %d: malformed record (want 'field, type, help'): %r" % (number, raw))
        field, prom_type, help_text = parts
        if prom_type not in ("gauge", "counter", "label", "histogram", "summary"):
            raise ValueError("line %d: unknown Prometheus type %r" % (number, prom_type))
        out.append(Counter(field, prom_type, help_text))
    return out


_DEFAULT = None


def default_counters():
    global _DEFAULT
    if _DEFAULT is None:
        with open(os.path.join(DATA, "dcgm-exporter-default-counters.csv")) as handle:
            _DEFAULT = parse_counters(handle.read())
    return list(_DEFAULT)


def image_version(image):
    """(major, minor, patch) of a dcgm-exporter image tag like ``4.6.0-4.8.3-distroless``; None if unknown."""
    tag = (image or "").split("@")[0].rsplit(":", 1)[-1] if ":" in (image or "").split("/")[-1] else ""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", tag)
    return tuple(int(g) for g in match.groups()) if match else None


def host_label_name(image):
    """``Hostname`` up to dcgm-exporter 4.5.3-4.8.2, ``hostname`` after (an untagged image: the newest)."""
    version = image_version(image)
    if version is not None and version <= LAST_CAPITAL_HOSTNAME:
        return "Hostname"
    return "hostname"


class Gpu(object):
    """One physical GPU of a node as DCGM sees it."""

    def __init__(self, node_name, index, product, memory_mib, mig_instances=None):
        self.index = index
        self.product = product or "Tesla-T4"
        self.memory_mib = int(memory_mib or 16384)
        digest = hashlib.sha256(("gpu/%s/%d" % (node_name, index)).encode("utf-8")).hexdigest()
        self.uuid = "GPU-%s-%s-%s-%s-%s" % (digest[:8], digest[8:12], digest[12:16], digest[16:20], digest[20:32])
        # Same bus ids as the simulated nvidia-smi table.
        self.pci_bus_id = "00000000:00:%02X.0" % (0x1E - index if index < 0x1E else index)
        self.seed = int(digest[32:40], 16)
        self.mig_instances = list(mig_instances or [])  # [(profile, instance id)]

    @property
    def model_name(self):
        """NVML's device name: the GFD product with its first dash a blank (``Tesla T4``, ``NVIDIA A10G``)."""
        if self.product.startswith(("Tesla-", "NVIDIA-", "Quadro-")):
            return self.product.replace("-", " ", 1)
        return self.product


def node_gpus(node_name, product, count, memory_mib, mig_layout=None):
    """The node's physical GPUs; with a MIG layout each carries its GPU instances."""
    gpus = []
    for index in range(count):
        instances = []
        if mig_layout is not None:
            gi = 1
            for profile in sorted(mig_layout.per_gpu):
                for _n in range(mig_layout.per_gpu[profile]):
                    instances.append((profile, gi))
                    gi += 1
        gpus.append(Gpu(node_name, index, product, memory_mib, instances))
    return gpus


def _wave(gpu, now, period, salt):
    """A slow, deterministic wobble in [-1, 1] per GPU."""
    return math.sin(now / period + (gpu.seed % 997) / 97.0 + salt)


def field_value(field, gpu, busy, now, uptime):
    """A realistic value of one DCGM field for one GPU (``busy``: allocated to a pod)."""
    cap = POWER_CAP_W.get(gpu.product, 300)
    sm_max, mem_clock = CLOCKS_MHZ.get(gpu.product, (1410, 5000))
    reserved = min(512, max(gpu.memory_mib // 60, 64))
    used = int(gpu.memory_mib * (0.42 + 0.05 * _wave(gpu, now, 60.0, 1.0))) if busy else 0
    load = (0.72 + 0.2 * _wave(gpu, now, 45.0, 2.0)) if busy else 0.0
    power = cap * (0.14 + 0.02 * _wave(gpu, now, 30.0, 3.0) + 0.6 * load)
    values = {
        "DCGM_FI_DEV_SM_CLOCK": int(sm_max * (0.93 if busy else 0.37)),
        "DCGM_FI_DEV_MEM_CLOCK": mem_clock if busy else int(mem_clock * 0.81),
        "DCGM_FI_DEV_MEMORY_TEMP": int(round(31 + 3 * _wave(gpu, now, 80.0, 4.0) + 20 * load)),
        "DCGM_FI_DEV_GPU_TEMP": int(round(33 + 3 * _wave(gpu, now, 90.0, 5.0) + 25 * load)),
        "DCGM_FI_DEV_POWER_USAGE": round(min(power, cap * 0.98), 3),
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": int(uptime * cap * 0.18 * 1000),
        "DCGM_FI_DEV_GPU_UTIL": int(round(100 * load)),
        "DCGM_FI_DEV_MEM_COPY_UTIL": int(round(40 * load)),
        "DCGM_FI_DEV_FB_USED": used,
        "DCGM_FI_DEV_FB_RESERVED": reserved,
        "DCGM_FI_DEV_FB_FREE": gpu.memory_mib - used - reserved,
        "DCGM_FI_DEV_FB_TOTAL": gpu.memory_mib,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": round(load, 6),
        "DCGM_FI_PROF_SM_ACTIVE": round(load * 0.9, 6),
        "DCGM_FI_PROF_SM_OCCUPANCY": round(load * 0.5, 6),
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": round(load * 0.3, 6),
        "DCGM_FI_PROF_DRAM_ACTIVE": round(load * 0.45, 6),
        "DCGM_FI_PROF_PCIE_TX_BYTES": int((2.5e7 if busy else 1.1e5) * (1.1 + 0.1 * _wave(gpu, now, 20.0, 6.0))),
        "DCGM_FI_PROF_PCIE_RX_BYTES": int((4.0e7 if busy else 2.3e5) * (1.1 + 0.1 * _wave(gpu, now, 25.0, 7.0))),
    }
    return values.get(field, 0)  # error counters, violations, license status, XID: 0


def format_value(field, value):
    if field in DOUBLE_FIELDS:
        return "%f" % float(value)
    return "%d" % int(value)


def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class ExporterConfig(object):
    """What the exporter container's image, env and args decide."""

    def __init__(
        self,
        counters=None,
        host_label="hostname",
        hostname=None,
        kubernetes=False,
        old_namespace=False,
        port=DEFAULT_PORT,
        address="",
    ):
        self.counters = counters if counters is not None else default_counters()
        self.host_label = host_label
        self.hostname = hostname
        self.kubernetes = kubernetes
        self.old_namespace = old_namespace
        self.port = port
        self.address = address


def render(config, gpus, driver_version, allocations=None, now=None, uptime=0.0):
    """The /metrics text. ``allocations``: {gpu index: (namespace, pod, container)}."""
    now = time.time() if now is None else now
    allocations = allocations or {}
    labels = {}
    for counter in config.counters:
        if counter.prom_type == "label":
            labels[counter.field] = driver_version if counter.field == "DCGM_FI_DRIVER_VERSION" else ""
    uuid_key = "uuid" if config.old_namespace else "UUID"
    out = []
    for counter in config.counters:
        if counter.prom_type == "label":
            continue
        out.append("# HELP %s %s" % (counter.field, counter.help))
        out.append("# TYPE %s %s" % (counter.field, counter.prom_type))
        for gpu in gpus:
            busy = gpu.index in allocations
            value = format_value(counter.field, field_value(counter.field, gpu, busy, now, uptime))
            for profile, gi in gpu.mig_instances or [(None, None)]:
                parts = [
                    'gpu="%d"' % gpu.index,
                    '%s="%s"' % (uuid_key, gpu.uuid),
                    'pci_bus_id="%s"' % gpu.pci_bus_id,
                    'device="nvidia%d"' % gpu.index,
                    'modelName="%s"' % _escape(gpu.model_name),
                ]
                if profile:
                    parts.append('GPU_I_PROFILE="%s"' % profile)
                    parts.append('GPU_I_ID="%d"' % gi)
                if config.hostname and config.host_label:
                    parts.append('%s="%s"' % (config.host_label, _escape(config.hostname)))
                for key in sorted(labels):
                    parts.append('%s="%s"' % (key, _escape(labels[key])))
                attrs = {}
                if counter.field == "DCGM_FI_DEV_XID_ERRORS":
                    attrs.update({"err_code": "0", "err_msg": "No Error"})
                if config.kubernetes and busy:
                    namespace, pod, container = allocations[gpu.index]
                    attrs.update({"namespace": namespace, "pod": pod, "container": container})
                for key in sorted(attrs):
                    parts.append('%s="%s"' % (key, _escape(attrs[key])))
                out.append("%s{%s} %s" % (counter.field, ",".join(parts), value))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ pod spec
def _env(container, name):
    for item in container.get("env") or []:
        if item.get("name") == name:
            return item
    return None


def _flag(args, long_name, short_name):
    """Value of ``--x v``, ``--x=v``, ``-s v`` in a container's command/args; None when absent."""
    for i, arg in enumerate(args):
        for prefix in ("--" + long_name, "-" + long_name, "-" + short_name):
            if arg == prefix:
                return args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("-") else "true"
            if arg.startswith(prefix + "="):
                return arg.split("=", 1)[1]
    return None


def _truthy(value):
    return str(value).strip().lower() in ("1", "t", "true", "yes", "y", "on")


def container_config(pod, node_name, read_configmap):
    """ExporterConfig of an exporter pod. ``read_configmap(name)`` -> data dict or None.

    Raises ValueError when the counters file cannot be read (the real exporter exits).
    """
    spec = pod.get("spec") or {}
    container = (spec.get("containers") or [{}])[0]
    args = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]

    def setting(env_name, long_name=None, short_name=None):
        value = _flag(args, long_name, short_name) if long_name else None
        if value is not None:
            return value
        item = _env(container, env_name)
        if item is None:
            return None
        if "value" in item:
            return item.get("value")
        ref = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if ref == "spec.nodeName":
            return node_name
        if ref == "metadata.name":
            return (pod.get("metadata") or {}).get("name")
        return None

    port = DEFAULT_PORT
    address = ""
    listen = setting("DCGM_EXPORTER_LISTEN", "address", "a")
    if listen:
        host, _sep, port_text = listen.rpartition(":")
        address = host.strip("[]")
        port = int(port_text)
    node_env = setting("NODE_NAME")  # env only, as internal/pkg/hostname reads it
    if node_env:
        hostname = node_env
    elif spec.get("hostNetwork"):
        hostname = node_name
    else:
        hostname = spec.get("hostname") or (pod.get("metadata") or {}).get("name")
    if _truthy(setting("DCGM_EXPORTER_NO_HOSTNAME", "no-hostname", "n") or "false"):
        hostname = None
    path = setting("DCGM_EXPORTER_COLLECTORS", "collectors", "f") or DEFAULT_COUNTERS_PATH
    counters = counters_from_mounts(pod, container, path, read_configmap)
    return ExporterConfig(
        counters=counters,
        host_label=host_label_name(container.get("image")),
        hostname=hostname,
        kubernetes=_truthy(setting("DCGM_EXPORTER_KUBERNETES", "kubernetes", "k") or "false"),
        old_namespace=_truthy(setting("DCGM_EXPORTER_USE_OLD_NAMESPACE", "use-old-namespace", "o") or "false"),
        port=port,
        address=address,
    )


def counters_from_mounts(pod, container, path, read_configmap):
    """Counters of ``path`` as the container sees it: a mounted ConfigMap key, or the image's own file."""
    volumes = dict((v.get("name"), v) for v in (pod.get("spec") or {}).get("volumes") or [])
    for mount in container.get("volumeMounts") or []:
        mount_path = (mount.get("mountPath") or "").rstrip("/")
        source = (volumes.get(mount.get("name")) or {}).get("configMap")
        if not source or not mount_path:
            continue
        if mount.get("subPath"):
            if path != mount_path:
                continue
            key = mount["subPath"]
        elif path.startswith(mount_path + "/"):
            key = path[len(mount_path) + 1 :]
        else:
            continue
        for item in source.get("items") or []:
            if item.get("path") == key:
                key = item.get("key")
                break
        data = read_configmap(source.get("name"))
        if data is None or key not in data:
            raise ValueError("open %s: no such file or directory" % path)
        return parse_counters(data[key])
    if path.startswith("/etc/dcgm-exporter/"):
        return default_counters()  # the image's files: default-counters.csv and its siblings
    raise ValueError("open %s: no such file or directory" % path)


# ------------------------------------------------------------------- servers
class _Server(ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _handler(source):
    class Handler(BaseHTTPRequestHandler):
        server_version = "dcgm-exporter"
        sys_version = ""

        def do_GET(self):  # noqa: N802
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, source(), CONTENT_TYPE)
            elif path == "/health":
                self._send(200, "OK", "text/plain; charset=utf-8", {"X-Registry-Available": "true"})
            elif path == "/":
                self._send(
                    200,
                    "<html><head><title>GPU Exporter</title></head><body><h1>GPU Exporter</h1>"
                    '<p><a href="./metrics">Metrics</a></p></body></html>',
                    "text/html",
                )
            else:
                self._send(404, "404 page not found\n", "text/plain; charset=utf-8")

        def _send(self, code, text, ctype, headers=None):
            body = text.encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):  # quiet
            return

    return Handler


class Listener(object):
    def __init__(self, key, node, address, port, source):
        self.key = key
        self.node = node
        self.address = address
        self.port = port
        self.server = _Server((address, port), _handler(source))
        self.thread = threading.Thread(target=self.server.serve_forever, name="exporter-%s" % key, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Listeners(object):
    """The exporter listeners of one controllers process: one per running, ready exporter pod."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_key = {}
        self.sources = {}
        self.failed = {}

    def scrape(self, key):
        """The exposition text of pod ``key``'s exporter, from its source as it is now."""
        return self.sources[key]()

    def ensure(self, key, node, address, port, source):
        """Listen on address:port for pod ``key`` (True), or False when the address cannot be bound."""
        with self.lock:
            self.sources[key] = source
            current = self.by_key.get(key)
            if current is not None and (current.address, current.port) == (address, port):
                return True
            if current is not None:
                current.stop()
                del self.by_key[key]
            try:
                # The source is looked up when a scrape comes, not now: it is replaced as the pod changes.
                listener = Listener(key, node, address, port, functools.partial(self.scrape, key))
            except (OSError, IOError) as exc:
                if self.failed.get(key) != (node, str(exc)):
                    LOG.warning(
                        "dcgm-exporter %s on %s: cannot listen on %s:%d (%s); it is unreachable (no pod network:"
                        " see tests/localcluster/README.md)",
                        key,
                        node,
                        address,
                        port,
                        exc,
                    )
                self.failed[key] = (node, str(exc))
                return False
            self.failed.pop(key, None)
            self.by_key[key] = listener
            LOG.info("dcgm-exporter %s on %s listening on %s:%d", key, node, address, port)
            return True

    def stop(self, key):
        with self.lock:
            listener = self.by_key.pop(key, None)
            self.sources.pop(key, None)
            self.failed.pop(key, None)
        if listener is not None:
            listener.stop()
            LOG.info("dcgm-exporter %s on %s stopped", key, listener.node)

    def keys_on(self, node):
        with self.lock:
            keys = set(k for k, v in self.by_key.items() if v.node == node)
            keys |= set(k for k, v in self.failed.items() if v[0] == node)
            return sorted(keys)

    def serving(self, key):
        with self.lock:
            return key in self.by_key

    def stop_node(self, node, keep=()):
        for key in self.keys_on(node):
            if key not in keep:
                self.stop(key)

    def stop_all(self):
        for key in list(self.by_key) + list(self.failed):
            self.stop(key)


def allocation_map(gpu_pods, gpu_count):
    """{gpu index: (namespace, pod, container)} for running pods with an nvidia.com/gpu limit, in creation order."""
    out = {}
    index = 0
    for pod in gpu_pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            limits = (container.get("resources") or {}).get("limits") or {}
            try:
                wanted = int(limits.get(catalog.GPU_RESOURCE) or 0)
            except ValueError:
                wanted = 0
            for _n in range(wanted):
                if index >= gpu_count:
                    return out
                meta = pod.get("metadata") or {}
                out[index] = (meta.get("namespace"), meta.get("name"), container.get("name"))
                index += 1
    return out
