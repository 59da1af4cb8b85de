# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""OpenShift builds and image streams, simulated (openshift-controller-manager).

Build lifecycle, as the build controller drives it:

* **New**: the base image (``strategy.*.from``) and the output
  (``spec.output.to``) are resolved. An ImageStreamTag that does not exist (or
  has no image yet) keeps the Build in New with reason
  ``InvalidImageReference`` ("Referenced image could not be resolved."), an
  output ImageStream that does not exist with ``InvalidOutputReference``;
  the build proceeds by itself once the tag or stream appears, exactly like
  OpenShift. With ``runPolicy: Serial`` (the default) a build also waits in
  New while an older build of its BuildConfig is Pending or Running.
* **Pending**: the build pod ``<build>-build`` (labelled
  ``openshift.io/build.name``, owned by the Build) is created and scheduled;
  ``status.outputDockerImageReference`` and ``status.config`` are set. A
  secret or config map the build mounts (``spec.source.secrets``,
  ``spec.source.configMaps``, ``sourceSecret``, docker strategy ``volumes``,
  pull/push secrets) that does not exist keeps the pod in ContainerCreating
  with a ``FailedMount`` event and the Build in Pending, as the kubelet does.
* **Running** (``startTimestamp``) -> **Complete** or **Failed** after two
  phases. A Docker build with a ``KERNEL_VERSION`` build argument (or env)
  fails (reason ``DockerBuildFailed``, ``logSnippet`` = log tail) when its
  base is the driver-toolkit image of another kernel, or when it is not based
  on the driver-toolkit and no entitlement is available (neither the
  cluster-wide entitlement MachineConfig in the current config of the build
  pod's node, i.e. rolled out there, nor an existing secret mounted at
  /etc/pki/entitlement): ``dnf`` cannot install
  ``kernel-devel`` then. Complete sets ``completionTimestamp``, ``duration``
  (nanoseconds), ``output.to.imageDigest`` and pushes a new item to the output
  ImageStream's ``status.tags``. The build log is the build pod's log
  (``oc logs build/x`` reads it) via the pods/log API.
* BuildConfig ``status.lastVersion`` follows the highest
  ``openshift.io/build.number``; a ``ConfigChange`` trigger starts build 1.

ImageStreams get ``status.dockerImageRepository`` and their DockerImage spec
tags imported into ``status.tags``. Every namespace gets the ``builder`` and
``deployer`` ServiceAccounts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import time

from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog, images, mco, podsim
from simopenshift.kube import (
    CONFIGMAPS,
    NAMESPACES,
    NODES,
    PODS,
    SECRETS,
    SERVICEACCOUNTS,
    Controller,
    annotations_of,
    key_of,
    labels_of,
    meta,
    name_of,
    namespace_of,
    now_rfc3339,
    parse_rfc3339,
    split_key,
)

LABEL_BUILD_NAME = "openshift.io/build.name"
LABEL_BC = "openshift.io/build-config.name"
ANN_BUILD_NUMBER = "openshift.io/build.number"
BUILDER_IMAGE = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + catalog.fake_digest("docker-builder", "4.16")
ENTITLEMENT_PEM = "/etc/pki/entitlement/entitlement.pem"

MSG_INVALID_IMAGE = "Referenced image could not be resolved."
MSG_INVALID_OUTPUT = "Output image could not be resolved."
MSG_DOCKER_FAILED = "Docker build strategy has failed."


def strategy_block(build):
    strategy = (build.get("spec") or {}).get("strategy") or {}
    for key in ("dockerStrategy", "sourceStrategy", "customStrategy"):
        if strategy.get(key) is not None:
            return key, strategy[key]
    return None, {}


def build_arg(build, name):
    _ignored, block = strategy_block(build)
    for entry in (block.get("buildArgs") or []) + (block.get("env") or []):
        if entry.get("name") == name and entry.get("value"):
            return entry["value"]
    return None


def split_istag(name):
    if "@" in name:
        return name.split("@", 1)[0], None
    if ":" in name:
        stream, tag = name.rsplit(":", 1)
        return stream, tag
    return name, "latest"


def tag_items(stream, tag):
    for entry in ((stream or {}).get("status") or {}).get("tags") or []:
        if entry.get("tag") == tag:
            return entry.get("items") or []
    return []


def mounted_refs(build):
    """(kind, name, purpose) of every secret/config map the build pod mounts."""
    spec = build.get("spec") or {}
    source = spec.get("source") or {}
    refs = []
    for entry in source.get("secrets") or []:
        refs.append(("Secret", (entry.get("secret") or {}).get("name"), entry.get("destinationDir") or ""))
    for entry in source.get("configMaps") or []:
        refs.append(("ConfigMap", (entry.get("configMap") or {}).get("name"), entry.get("destinationDir") or ""))
    if (source.get("sourceSecret") or {}).get("name"):
        refs.append(("Secret", source["sourceSecret"]["name"], "source"))
    _ignored, block = strategy_block(build)
    if (block.get("pullSecret") or {}).get("name"):
        refs.append(("Secret", block["pullSecret"]["name"], "pull"))
    for volume in block.get("volumes") or []:
        vsource = volume.get("source") or {}
        paths = ",".join(m.get("destinationPath", "") for m in volume.get("mounts") or [])
        if (vsource.get("secret") or {}).get("secretName"):
            refs.append(("Secret", vsource["secret"]["secretName"], paths))
        if (vsource.get("configMap") or {}).get("name"):
            refs.append(("ConfigMap", vsource["configMap"]["name"], paths))
    if ((spec.get("output") or {}).get("pushSecret") or {}).get("name"):
        refs.append(("Secret", spec["output"]["pushSecret"]["name"], "push"))
    return [r for r in refs if r[1]]


def dockerfile_steps(build):
    text = ((build.get("spec") or {}).get("source") or {}).get("dockerfile") or ""
    steps = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        steps.append(pending + line)
        pending = ""
    return steps or ["FROM base", "RUN make"]


class BuildController(Controller):
    name = "builds"

    def setup(self):
        self.builds = self.informer(apis.BUILDS)
        self.configs = self.informer(apis.BUILDCONFIGS)
        self.streams = self.informer(apis.IMAGESTREAMS)
        self.pods = self.informer(PODS)
        self.pools = self.informer(apis.MACHINECONFIGPOOLS)
        self.mcs = self.informer(apis.MACHINECONFIGS)
        self.logs = podsim.LogStore(self.client, self.manager.workdir)
        self.seen = {}  # build uid -> time the current phase started (controller memory)
        self.mount_warned = set()
        self.builds.add_handler(self.enqueue_obj)
        self.streams.add_handler(self._on_stream)
        self.pods.add_handler(self._on_pod)

    def _on_stream(self, etype, stream, old):
        # Builds waiting in New may reference streams in other namespaces (openshift/driver-toolkit).
        for build in self.builds.list(predicate=lambda b: (b.get("status") or {}).get("phase") in (None, "", "New")):
            self.enqueue(key_of(build))

    def _on_pod(self, etype, pod, old):
        name = labels_of(pod).get(LABEL_BUILD_NAME)
        if name:
            self.enqueue("%s/%s" % (namespace_of(pod), name))

    # ------------------------------------------------------------ resolution
    def resolve_from(self, build):
        """(image reference, digest) of the base image, or None when unresolvable."""
        _ignored, block = strategy_block(build)
        ref = block.get("from")
        if not ref:
            return ("", None)
        kind = ref.get("kind")
        if kind == "DockerImage":
            name = ref.get("name", "")
            digest = name.split("@", 1)[1] if "@" in name else catalog.fake_digest("image", name)
            return (name, digest)
        stream_name, tag = split_istag(ref.get("name", ""))
        stream = self.streams.get(stream_name, ref.get("namespace") or namespace_of(build))
        if not stream:
            return None
        if kind == "ImageStreamImage" or tag is None:
            digest = ref.get("name", "").split("@", 1)[-1]
            for entry in (stream.get("status") or {}).get("tags") or []:
                for item in entry.get("items") or []:
                    if item.get("image") == digest:
                        return (item.get("dockerImageReference"), digest)
            return None
        items = tag_items(stream, tag)
        if not items:
            return None
        return (items[0].get("dockerImageReference"), items[0].get("image"))

    def output_stream(self, build):
        to = ((build.get("spec") or {}).get("output") or {}).get("to") or {}
        if to.get("kind") != "ImageStreamTag":
            return None, None
        stream_name, tag = split_istag(to.get("name", ""))
        return self.streams.get(stream_name, to.get("namespace") or namespace_of(build)), tag

    def output_reference(self, build):
        to = ((build.get("spec") or {}).get("output") or {}).get("to") or {}
        if to.get("kind") == "DockerImage":
            return to.get("name")
        if to.get("kind") == "ImageStreamTag":
            stream_name, tag = split_istag(to.get("name", ""))
            return "%s/%s/%s:%s" % (
                catalog.INTERNAL_REGISTRY,
                to.get("namespace") or namespace_of(build),
                stream_name,
                tag or "latest",
            )
        return None

    def dtk_kernel(self, build, base_digest):
        """Kernel of the driver-toolkit base image, None when the base is not the DTK."""
        _ignored, block = strategy_block(build)
        ref = block.get("from") or {}
        name = ref.get("name", "")
        if ref.get("kind") in ("ImageStreamTag", "ImageStreamImage") and split_istag(name)[0] == "driver-toolkit":
            stream = self.streams.get("driver-toolkit", ref.get("namespace") or namespace_of(build))
            # Which RHCOS build tag carries this image (``latest`` aliases one).
            for entry in ((stream or {}).get("status") or {}).get("tags") or []:
                items = entry.get("items") or []
                if items and items[0].get("image") == base_digest:
                    known = catalog.rhcos_build(entry.get("tag"))
                    if known and known.kernel:
                        return known.kernel
            return None
        for build_ in catalog.rhcos_builds().values():
            if name == catalog.dtk_image(build_.build):
                return build_.kernel
        return None

    def is_dtk(self, build):
        if build_arg(build, "DTK_IMAGE"):
            return True
        _ignored, block = strategy_block(build)
        ref = block.get("from") or {}
        return "driver-toolkit" in ref.get("name", "")

    @staticmethod
    def arg_dtk_kernel(pullspec):
        """Kernel of the Driver Toolkit a DTK_IMAGE build argument names (release pull spec or ImageStream tag)."""
        return images.dtk_kernel(pullspec)

    @staticmethod
    def driver_stage_failure(build, steps):
        """A multi-stage build copying the .run out of NVIDIA's driver image: that image must have it."""
        step = next((s for s in steps if s.upper().startswith("COPY --FROM=DRIVER ")), None)
        if step is None:
            return None, None
        ref = build_arg(build, "DRIVER_IMAGE") or ""
        contents = images.driver_image(ref)
        version = build_arg(build, "DRIVER_VERSION")
        if contents is not None and contents.kind == "driver" and contents.driver == version:
            return None, None
        source = step.split()[2] if len(step.split()) > 2 else "/drivers"
        source = source.replace("${TARGET_ARCH}", "x86_64").replace("${DRIVER_VERSION}", version or "")
        return step, [
            'error: building at STEP "%s": checking on sources under "/var/lib/containers/storage/overlay/%s/merged": '
            'copier: stat: "%s": no such file or directory' % (step, catalog.fake_hex(64, ref), source)
        ]

    def entitled(self, build):
        """Can dnf in this build reach the RHEL repos that carry kernel-devel?"""
        for kind, name, dest in mounted_refs(build):
            if (
                kind == "Secret"
                and "entitlement" in (dest + name)
                and self.client.get(SECRETS, name, namespace_of(build)) is not None
            ):
                return True
        # CRI-O mounts the host's /etc/pki/entitlement into the build container:
        # what counts is the config the build pod's node runs now, not a
        # MachineConfig that exists but has not been rolled out there.
        pod = self.pods.get(self._pod_name(build), namespace_of(build))
        node = self.manager.informer(NODES).get(((pod or {}).get("spec") or {}).get("nodeName"))
        if node is not None:
            return mco.node_entitlement(node, self.mcs.get)[0]
        pool = self.pools.get("worker")
        rendered = ((pool or {}).get("status") or {}).get("configuration", {}).get("name")
        return bool(rendered and mco.file_in_config(self.mcs.get(rendered), ENTITLEMENT_PEM))

    def missing_mounts(self, build):
        missing = []
        for kind, name, _ignored in mounted_refs(build):
            res = SECRETS if kind == "Secret" else CONFIGMAPS
            if self.client.get(res, name, namespace_of(build)) is None:
                missing.append((kind, name))
        return missing

    # ------------------------------------------------------------- lifecycle
    def _status(self, build, fields):
        self.client.patch(apis.BUILDS, name_of(build), {"status": fields}, namespace_of(build), subresource="status")

    def _phase_started(self, build):
        uid = meta(build).get("uid")
        phase = (build.get("status") or {}).get("phase")
        entry = self.seen.get(uid)
        if not entry or entry[0] != phase:
            entry = (phase, time.time())
            self.seen[uid] = entry
        return entry[1]

    def reconcile(self, key):
        namespace, name = split_key(key)
        build = self.builds.get(name, namespace)
        if not build:
            return None
        status = build.get("status") or {}
        phase = status.get("phase")
        if phase in ("Complete", "Failed", "Error", "Cancelled"):
            self.seen.pop(meta(build).get("uid"), None)
            return None
        if not phase:
            self._status(build, {"phase": "New"})
            return None
        if phase == "New":
            return self._new(build)
        if phase == "Pending":
            return self._pending(build)
        if phase == "Running":
            return self._running(build)
        return None

    def _blocked_by_serial(self, build):
        bc_name = labels_of(build).get(LABEL_BC) or annotations_of(build).get(LABEL_BC)
        if not bc_name:
            return False
        bc = self.configs.get(bc_name, namespace_of(build))
        if ((bc or {}).get("spec") or {}).get("runPolicy", "Serial") == "Parallel":
            return False
        number = int(annotations_of(build).get(ANN_BUILD_NUMBER) or 0)
        for other in self.builds.list(namespace_of(build)):
            if other is build or (labels_of(other).get(LABEL_BC) or annotations_of(other).get(LABEL_BC)) != bc_name:
                continue
            other_number = int(annotations_of(other).get(ANN_BUILD_NUMBER) or 0)
            if other_number < number and (other.get("status") or {}).get("phase") in ("New", "Pending", "Running"):
                return True
        return False

    def _new(self, build):
        status = build.get("status") or {}
        if self._blocked_by_serial(build):
            return self.timing()
        # The build controller takes a moment to create the pod; New stays observable.
        wait = self.timing(0.25) - (time.time() - self._phase_started(build))
        if wait > 0:
            return wait
        if self.resolve_from(build) is None:
            if status.get("reason") != "InvalidImageReference":
                self._status(build, {"reason": "InvalidImageReference", "message": MSG_INVALID_IMAGE})
            return None  # an ImageStream event re-queues it
        stream, _ignored = self.output_stream(build)
        to = ((build.get("spec") or {}).get("output") or {}).get("to") or {}
        if to.get("kind") == "ImageStreamTag" and stream is None:
            if status.get("reason") != "InvalidOutputReference":
                self._status(build, {"reason": "InvalidOutputReference", "message": MSG_INVALID_OUTPUT})
            return None
        pod = self._ensure_pod(build)
        fields = {
            "phase": "Pending",
            "reason": None,
            "message": None,
            "outputDockerImageReference": self.output_reference(build),
        }
        bc_name = labels_of(build).get(LABEL_BC) or annotations_of(build).get(LABEL_BC)
        if bc_name:
            fields["config"] = {"kind": "BuildConfig", "name": bc_name, "namespace": namespace_of(build)}
        self._status(build, fields)
        self.log.info("build %s: Pending (pod %s)", key_of(build), name_of(pod))
        return None

    def _pod_name(self, build):
        return "%s-build" % name_of(build)

    def _ensure_pod(self, build):
        existing = self.pods.get(self._pod_name(build), namespace_of(build))
        if existing:
            return existing
        spec = build.get("spec") or {}
        volumes, mounts = [], []
        for i, (kind, name, dest) in enumerate(mounted_refs(build)):
            vol = "build-%s-%d" % (kind.lower(), i)
            volumes.append(
                {
                    "name": vol,
                    ("secret" if kind == "Secret" else "configMap"): (
                        {"secretName": name} if kind == "Secret" else {"name": name}
                    ),
                }
            )
            mounts.append({"name": vol, "mountPath": "/var/run/secrets/openshift.io/build/%s" % vol})
        body = {
            "metadata": {
                "name": self._pod_name(build),
                "namespace": namespace_of(build),
                "labels": {LABEL_BUILD_NAME: name_of(build)},
                "annotations": {LABEL_BUILD_NAME: name_of(build)},
                "ownerReferences": [
                    {
                        "apiVersion": apis.BUILDS.api_version,
                        "kind": "Build",
                        "name": name_of(build),
                        "uid": meta(build).get("uid"),
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "serviceAccountName": spec.get("serviceAccount") or "builder",
                "restartPolicy": "Never",
                # OpenShift's masters are NoSchedule, so build pods land on workers; the
                # simulated masters carry no taint, hence the default selector.
                "nodeSelector": spec.get("nodeSelector") or {"node-role.kubernetes.io/worker": ""},
                "containers": [
                    {
                        "name": "docker-build",
                        "image": BUILDER_IMAGE,
                        "command": ["openshift-docker-build"],
                        "env": [{"name": "BUILD", "value": name_of(build)}],
                        # As openshift-controller-manager's build strategy (strategy/docker.go) sets it.
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                        "volumeMounts": mounts,
                    }
                ],
                "volumes": volumes,
            },
        }
        if not body["spec"]["nodeSelector"]:
            del body["spec"]["nodeSelector"]
        try:
            return self.client.create(PODS, body)
        except ApiException as exc:
            if exc.status == 409:
                return self.client.get(PODS, self._pod_name(build), namespace_of(build))
            raise

    def _host_ip(self, pod):
        node = self.manager.informer(NODES).get((pod.get("spec") or {}).get("nodeName"))
        for address in ((node or {}).get("status") or {}).get("addresses") or []:
            if address.get("type") == "InternalIP":
                return address.get("address")
        return "127.0.0.1"

    def _pending(self, build):
        pod = self.pods.get(self._pod_name(build), namespace_of(build))
        if pod is None:
            self._ensure_pod(build)
            return self.timing(0.5)
        if not (pod.get("spec") or {}).get("nodeName"):
            return self.timing(0.5)
        started = self._phase_started(build)
        missing = self.missing_mounts(build)
        if missing:
            kind, name = missing[0]
            states = {"docker-build": podsim.waiting("ContainerCreating")}
            status = podsim.pod_status(pod, states, self._host_ip(pod), started)
            if not podsim.same_status(pod.get("status"), status):
                podsim.patch_pod_status(self.client, pod, status)
            uid = meta(pod).get("uid")
            if uid not in self.mount_warned:
                self.mount_warned.add(uid)
                self.client.event(
                    dict(pod, apiVersion="v1", kind="Pod"),
                    "FailedMount",
                    'MountVolume.SetUp failed for volume "build-%s-0" : %s "%s" not found'
                    % (kind.lower(), kind.lower() if kind == "Secret" else "configmap", name),
                    "Warning",
                    "kubelet",
                )
                self.log.info("build %s: %s %s missing; build pod cannot start", key_of(build), kind, name)
            return self.timing(2)
        wait = self.timing() - (time.time() - started)
        if wait > 0:
            return wait
        now = time.time()
        states = {"docker-build": podsim.running(now)}
        podsim.patch_pod_status(self.client, pod, podsim.pod_status(pod, states, self._host_ip(pod), now))
        self.logs.write(pod, "docker-build", self._log_head(build))
        self.logs.publish(pod, ["docker-build"])
        self._status(build, {"phase": "Running", "startTimestamp": now_rfc3339(now)})
        self.log.info("build %s: Running", key_of(build))
        return None

    def _log_head(self, build):
        base = self.resolve_from(build) or ("", None)
        lines = [
            'time="%s" level=info msg="Not using native diff for overlay, this may cause degraded performance '
            'for building images: kernel has CONFIG_OVERLAY_FS_REDIRECT_DIR enabled"' % now_rfc3339(),
            'Caching blobs under "/var/cache/blobs".',
            "",
        ]
        if base[0]:
            lines += [
                "Pulling image %s ..." % base[0],
                "Trying to pull %s..." % base[0],
                "Getting image source signatures",
                "Writing manifest to image destination",
            ]
        return "\n".join(lines) + "\n"

    def _running(self, build):
        pod = self.pods.get(self._pod_name(build), namespace_of(build))
        started = parse_rfc3339((build.get("status") or {}).get("startTimestamp")) or time.time()
        wait = self.timing(2) - (time.time() - started)
        if wait > 0:
            return wait
        base = self.resolve_from(build)
        if base is None:  # the base tag was deleted under the running build
            base = ("", None)
        steps = dockerfile_steps(build)
        total = len(steps)
        log = [self._log_head(build).rstrip("\n")]
        kernel = build_arg(build, "KERNEL_VERSION")
        fail_at, failure = self.driver_stage_failure(build, steps)
        if kernel and not failure:
            if self.is_dtk(build):
                dtk_arg = build_arg(build, "DTK_IMAGE")
                dtk_kernel = self.arg_dtk_kernel(dtk_arg) if dtk_arg else self.dtk_kernel(build, base[1])
                if dtk_kernel and dtk_kernel != kernel:
                    dtk_build = catalog.rhcos_build_for_kernel(dtk_kernel)
                    failure = [
                        'driver-toolkit-release: {"KERNEL_VERSION": "%s", "RT_KERNEL_VERSION": "", '
                        '"RHEL_VERSION": "%s"}' % (dtk_kernel, dtk_build.rhel if dtk_build else "9.4"),
                        "make: *** /lib/modules/%s/build: No such file or directory.  Stop." % kernel,
                    ]
            elif not self.entitled(build):
                failure = [
                    "Updating Subscription Management repositories.",
                    "Unable to read consumer identity",
                    "This system is not registered with an entitlement server. You can use subscription-manager "
                    "to register.",
                    "Error: Unable to find a match: kernel-devel-%s kernel-headers-%s" % (kernel, kernel),
                ]
        fail_step = min(max(total // 2, 1), total) if failure else None
        if fail_at:
            fail_step = steps.index(fail_at) + 1
        for index, step in enumerate(steps, 1):
            log.append("STEP %d/%d: %s" % (index, total, step))
            if fail_step == index:
                log.extend(failure)
                if not fail_at:  # a COPY fails on its sources, a RUN in the runtime
                    log.append('error: build error: building at STEP "%s": while running runtime: exit status 2' % step)
                break
            if step.upper().startswith("RUN") and kernel:
                log.append("Building NVIDIA kernel modules for kernel %s" % kernel)
        now = time.time()
        start = parse_rfc3339((build.get("status") or {}).get("startTimestamp")) or now
        fields = {"completionTimestamp": now_rfc3339(now), "duration": int((now - start) * 1e9)}
        if failure:
            text = "\n".join(log) + "\n"
            fields.update(
                {
                    "phase": "Failed",
                    "reason": "DockerBuildFailed",
                    "message": MSG_DOCKER_FAILED,
                    "logSnippet": podsim.tail(text, 5),
                }
            )
            exit_code = 1
        else:
            digest = catalog.fake_digest("build", namespace_of(build), name_of(build), meta(build).get("uid"))
            out_ref = self.output_reference(build)
            log += [
                "COMMIT temp.builder.openshift.io/%s/%s:%s" % (namespace_of(build), name_of(build), digest[7:15]),
                "--> %s" % digest[7:19],
                "Successfully tagged temp.builder.openshift.io/%s/%s:%s"
                % (namespace_of(build), name_of(build), digest[7:15]),
            ]
            if out_ref:
                log += [
                    "",
                    "Pushing image %s ..." % out_ref,
                    "Getting image source signatures",
                    "Copying config %s" % digest,
                    "Writing manifest to image destination",
                    "Successfully pushed %s@%s" % (out_ref.rsplit(":", 1)[0], digest),
                    "Push successful",
                ]
                self._push(build, digest)
            text = "\n".join(log) + "\n"
            fields.update(
                {"phase": "Complete", "output": {"to": {"imageDigest": digest}}, "stages": self._stages(start, now)}
            )
            exit_code = 0
        if pod is not None:
            self.logs.write(pod, "docker-build", text)
            self.logs.publish(pod, ["docker-build"])
            states = {
                "docker-build": podsim.terminated(
                    exit_code, start, now, podsim.termination_message(pod, exit_code, text)
                )
            }
            podsim.patch_pod_status(self.client, pod, podsim.pod_status(pod, states, self._host_ip(pod), start))
        self._status(build, fields)
        self.log.info("build %s: %s", key_of(build), fields["phase"])
        return None

    @staticmethod
    def _stages(start, end):
        span = int((end - start) * 1000)
        return [
            {
                "name": "PullImages",
                "startTime": now_rfc3339(start),
                "durationMilliseconds": span // 4,
                "steps": [
                    {"name": "PullBaseImage", "startTime": now_rfc3339(start), "durationMilliseconds": span // 4}
                ],
            },
            {
                "name": "Build",
                "startTime": now_rfc3339(start),
                "durationMilliseconds": span // 2,
                "steps": [{"name": "DockerBuild", "startTime": now_rfc3339(start), "durationMilliseconds": span // 2}],
            },
            {
                "name": "PushImage",
                "startTime": now_rfc3339(end),
                "durationMilliseconds": span // 4,
                "steps": [
                    {"name": "PushDockerImage", "startTime": now_rfc3339(end), "durationMilliseconds": span // 4}
                ],
            },
        ]

    def _push(self, build, digest):
        """Record the pushed image on the output ImageStreamTag (what the registry does)."""
        to = ((build.get("spec") or {}).get("output") or {}).get("to") or {}
        if to.get("kind") != "ImageStreamTag":
            return
        stream_name, tag = split_istag(to.get("name", ""))
        namespace = to.get("namespace") or namespace_of(build)
        for _ignored in range(5):
            stream = self.client.get(apis.IMAGESTREAMS, stream_name, namespace)
            if stream is None:
                return
            status = stream.setdefault("status", {})
            status.setdefault("dockerImageRepository", "%s/%s/%s" % (catalog.INTERNAL_REGISTRY, namespace, stream_name))
            tags = status.setdefault("tags", [])
            entry = next((t for t in tags if t.get("tag") == tag), None)
            if entry is None:
                entry = {"tag": tag, "items": []}
                tags.append(entry)
            generation = max([i.get("generation", 0) for t in tags for i in t.get("items") or []] + [0]) + 1
            reference = "%s/%s/%s@%s" % (catalog.INTERNAL_REGISTRY, namespace, stream_name, digest)
            new_item = {
                "created": now_rfc3339(),
                "image": digest,
                "generation": generation,
                "dockerImageReference": reference,
            }
            entry["items"] = [new_item] + (entry.get("items") or [])
            try:
                self.client.replace(apis.IMAGESTREAMS, stream, subresource="status")
                return
            except ApiException as exc:
                if exc.status != 409:
                    raise


class BuildConfigController(Controller):
    name = "buildconfigs"

    def setup(self):
        self.configs = self.informer(apis.BUILDCONFIGS)
        self.builds = self.informer(apis.BUILDS)
        self.configs.add_handler(self.enqueue_obj)
        self.builds.add_handler(self._on_build)

    def _on_build(self, etype, build, old):
        bc = labels_of(build).get(LABEL_BC) or annotations_of(build).get(LABEL_BC)
        if bc:
            self.enqueue("%s/%s" % (namespace_of(build), bc))

    def reconcile(self, key):
        namespace, name = split_key(key)
        bc = self.configs.get(name, namespace)
        if not bc or meta(bc).get("deletionTimestamp"):
            return None
        numbers = [
            int(annotations_of(b).get(ANN_BUILD_NUMBER) or 0)
            for b in self.builds.list(namespace)
            if (labels_of(b).get(LABEL_BC) or annotations_of(b).get(LABEL_BC)) == name
        ]
        last = int(((bc.get("status") or {}).get("lastVersion")) or 0)
        triggers = [t.get("type") for t in (bc.get("spec") or {}).get("triggers") or []]
        if not numbers and last == 0 and "ConfigChange" in triggers:
            self.client.create(apis.BUILDS, build_from_config(bc, 1, "Build configuration change"))
            numbers = [1]
            self.log.info("buildconfig %s: ConfigChange trigger started build 1", key)
        highest = max(numbers + [last])
        if highest != last:
            self.client.patch(
                apis.BUILDCONFIGS, name, {"status": {"lastVersion": highest}}, namespace, subresource="status"
            )
        return None


def build_from_config(bc, number, message="Manually triggered"):
    """The Build `oc start-build` (buildconfigs/instantiate) creates from a BuildConfig."""
    name = name_of(bc)
    spec = copy.deepcopy(bc.get("spec") or {})
    build_spec = {
        k: spec[k]
        for k in (
            "serviceAccount",
            "source",
            "strategy",
            "output",
            "resources",
            "postCommit",
            "completionDeadlineSeconds",
            "nodeSelector",
        )
        if k in spec
    }
    build_spec["triggeredBy"] = [{"message": message}]
    policy = spec.get("runPolicy") or "Serial"
    return {
        "apiVersion": apis.BUILDS.api_version,
        "kind": "Build",
        "metadata": {
            "name": "%s-%d" % (name, number),
            "namespace": namespace_of(bc),
            "labels": {"buildconfig": name, LABEL_BC: name, "openshift.io/build.start-policy": policy},
            "annotations": {LABEL_BC: name, ANN_BUILD_NUMBER: str(number)},
            "ownerReferences": [
                {
                    "apiVersion": apis.BUILDCONFIGS.api_version,
                    "kind": "BuildConfig",
                    "name": name,
                    "uid": meta(bc).get("uid"),
                    "controller": True,
                }
            ],
        },
        "spec": build_spec,
    }


class ImageStreamController(Controller):
    name = "imagestreams"

    def setup(self):
        self.streams = self.informer(apis.IMAGESTREAMS)
        self.streams.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        namespace, name = split_key(key)
        stream = self.streams.get(name, namespace)
        if not stream:
            return None
        status = copy.deepcopy(stream.get("status") or {})
        changed = False
        repo = "%s/%s/%s" % (catalog.INTERNAL_REGISTRY, namespace, name)
        if status.get("dockerImageRepository") != repo:
            status["dockerImageRepository"] = repo
            changed = True
        tags = status.setdefault("tags", [])
        for spec_tag in (stream.get("spec") or {}).get("tags") or []:
            src = spec_tag.get("from") or {}
            if src.get("kind") != "DockerImage" or not src.get("name"):
                continue
            ref = src["name"]
            digest = ref.split("@", 1)[1] if "@" in ref else catalog.fake_digest("image", ref)
            entry = next((t for t in tags if t.get("tag") == spec_tag.get("name")), None)
            if entry is None:
                entry = {"tag": spec_tag.get("name"), "items": []}
                tags.append(entry)
            items = entry.get("items") or []
            if not items or items[0].get("image") != digest:
                generation = meta(stream).get("generation", 1)
                entry["items"] = [
                    {"created": now_rfc3339(), "dockerImageReference": ref, "image": digest, "generation": generation}
                ] + items
                changed = True
        if changed:
            try:
                self.client.patch(apis.IMAGESTREAMS, name, {"status": status}, namespace, subresource="status")
            except ApiException as exc:
                if exc.status != 404:
                    raise
        return None


class ServiceAccountsController(Controller):
    """openshift-controller-manager's default ServiceAccounts: builder, deployer."""

    name = "default-serviceaccounts"

    def setup(self):
        self.namespaces = self.informer(NAMESPACES)
        self.namespaces.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        ns = self.namespaces.get(key)
        if not ns or (ns.get("status") or {}).get("phase") == "Terminating":
            return None
        for sa in ("builder", "deployer"):
            try:
                self.client.ensure(SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": key}})
            except ApiException as exc:
                if exc.status not in (403, 404):  # namespace going away
                    raise
        return None
