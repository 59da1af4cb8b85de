# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The GPU node agent: kubelet + NVIDIA stack on every node, simulated.

kwok plays kubelet for ordinary pods; for the pods this agent owns
(``gpustack.agent_owned``: label ``app.kubernetes.io/component`` one of
nvidia-driver, nvidia-container-toolkit, nvidia-device-plugin,
gpu-feature-discovery, dcgm-exporter, gpu-validation, or any container with a
``nvidia.com/gpu`` limit) kwok's stages stand aside and this agent writes the
pod status and the log, reproducing the GPU Operator / SRO state machine:

1. **driver**: Ready (after a load phase) when its image was built for the
   node's kernel (``status.nodeInfo.kernelVersion``), otherwise
   CrashLoopBackOff with a growing restartCount and a modprobe error in the
   log, as after a kernel upgrade. An internal-registry image that does not
   exist gives ImagePullBackOff.
2. **container toolkit**: Ready once the node's driver is Ready (waits in
   PodInitializing before), logging the runtime its ``RUNTIME`` env names;
   a runtime the node does not run (``nodeInfo.containerRuntimeVersion``)
   crash-loops it with the installer's error.
3. **device plugin**: Ready once driver and toolkit are; then the node's
   ``status.capacity``/``allocatable`` get ``nvidia.com/gpu`` = GPU count (x
   time-slicing replicas from the plugin's config map). While the driver is
   unhealthy allocatable drops to 0; without a device plugin pod the resource
   is removed.
4. **gpu-feature-discovery**: Ready with driver and toolkit; the node gets the
   ``nvidia.com/*`` labels of seed 004 (product, count, memory, family,
   compute capability, cuda driver/runtime versions, machine), unless GFD runs
   on the NodeFeature API (``USE_NODE_FEATURE_API`` not ``false``) on the
   openshift profile, whose NFD does not turn NodeFeature objects into labels.
5. **dcgm-exporter**: Ready with driver and toolkit; a Ready exporter pod
   serves ``/metrics`` and ``/health`` on its pod IP and port (``exporter.py``:
   the real exposition format, counters from its CSV) while the pod is Ready and
   the node Ready. Node annotation ``sim.gpuops.io/dcgm-exporter: down`` makes
   it crash-loop (not Ready, nothing listening).
6. **validation and GPU workloads**: run-to-completion pods (restartPolicy
   Never/OnFailure) Succeed with the vectorAdd "Test PASSED" text, an
   nvidia-smi table or DCGM's diagnostics JSON (``dcgmi diag -r N -j``; node
   annotation ``sim.gpuops.io/dcgm-diag-fail: <gpu>`` fails that GPU's memory
   test, exit 205) when the stack is ready, and Fail (or crash-loop, for
   OnFailure) with the CUDA/nvidia-smi error otherwise; long-running GPU pods
   run or crash-loop likewise.

The entitlement test pod (``app.kubernetes.io/component: entitlement-test``,
e.g. ``dnf search kernel-devel`` in a UBI image) succeeds with dnf's listing
when the node's current rendered config (annotation currentConfig) holds
/etc/pki/entitlement/entitlement.pem, as CRI-O would mount it, and fails
(exit 1, "This system is not registered with an entitlement server ...",
"No matches found.") otherwise.

Logs are served through pods/log (podsim.LogStore) and, for terminated
containers, in the termination message. A node that is NotReady (broken, or
rebooting during a MachineConfig update) freezes: its pods keep their last
status; a new bootID restarts them (restartCount +1, load phases again).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from simopenshift import apis, catalog, entitlement, exporter, gpustack, images, mco, mig, nfd, podsim, runtime
from simopenshift.kube import (
    CONFIGMAPS,
    NODES,
    PODS,
    RUNTIMECLASSES,
    Controller,
    annotations_of,
    labels_of,
    meta,
    name_of,
    namespace_of,
    node_ready,
)

DRIVER, TOOLKIT, PLUGIN, GFD, DCGM, VALIDATION = catalog.COMPONENTS
# Test lever: the node's dcgm-exporter crashes (DCGM host engine unreachable) while this annotation says "down".
ANN_EXPORTER = catalog.SIM_PREFIX + "dcgm-exporter"
# Test lever: the GPU of this index fails DCGM's memory test (dcgmi diag) while the annotation is set.
ANN_DCGM_DIAG_FAIL = catalog.SIM_PREFIX + "dcgm-diag-fail"
EXPORTER_CRASH_LOG = (
    'time="{0}" level=info msg="Starting dcgm-exporter"\n'
    'time="{0}" level=fatal msg="Error connecting to nv-hostengine: Host engine connection invalid/disconnected"\n'
)


class PodClock(object):
    """Per-pod memory: when the agent started running it and how often it restarted."""

    def __init__(self, started, restarts=0, boot=None):
        self.started = started
        self.restarts = restarts
        self.boot = boot
        self.final = False
        # Device plugin pods: the sharing config the plugin process read at start, the node label it was selected
        # by, and since when config-manager has seen a new label (it switches after CONFIG_MANAGER_DELAY phases).
        self.config = None
        self.config_key = None
        self.config_pending = None
        # An operand that started before its dependency crash-loops; once the dependency is up it runs again
        # only at its next restart, after the kubelet's back-off (10 s doubling up to 5 min).
        self.crashing_since = None
        self.resume_at = None


class NodeAgent(Controller):
    name = "gpu-node-agent"
    # One key per node: several workers play kubelets working side by side.
    workers = 8

    def setup(self):
        self.nodes = self.informer(NODES)
        self.pods = self.informer(PODS)
        self.configmaps = self.informer(CONFIGMAPS)
        self.runtimeclasses = self.informer(RUNTIMECLASSES)
        self.openshift = self.manager.profile == "openshift"
        if self.openshift:
            self.streams = self.informer(apis.IMAGESTREAMS)
            self.builds = self.informer(apis.BUILDS)
            self.machineconfigs = self.informer(apis.MACHINECONFIGS)
        self.logs = podsim.LogStore(self.client, self.manager.workdir)
        self.exporters = exporter.Listeners()
        self.exporter_views = {}
        self.started = time.time()
        self.clocks = {}
        # node -> (uid of the driver pod that loaded the modules, boot id): what a new driver pod must unload
        self.loaded = {}
        self.gfd_stamp = {}
        # (pod uid, reason, message) of the kubelet events already recorded: one per failure, not per pass.
        self.events_sent = set()
        self.nodes.add_handler(self.enqueue_obj)
        self.pods.add_handler(self._on_pod)
        self.configmaps.add_handler(self._on_configmap)

    def _on_pod(self, etype, pod, old):
        node = (pod.get("spec") or {}).get("nodeName")
        if etype == "DELETED":
            self.clocks.pop(meta(pod).get("uid"), None)
            self.logs.forget(pod)
            self.exporters.stop(meta(pod).get("uid"))
            self.exporter_views.pop(meta(pod).get("uid"), None)
            podsim.NETWORK.release(pod)
        elif meta(pod).get("deletionTimestamp"):
            self.exporters.stop(meta(pod).get("uid"))
        if node and (gpustack.agent_owned(pod) or (old and gpustack.agent_owned(old))):
            self.enqueue(node)

    def _on_configmap(self, etype, cm, old):
        for pod in self.pods.list(namespace_of(cm), predicate=lambda p: gpustack.component(p) == PLUGIN):
            if (pod.get("spec") or {}).get("nodeName"):
                self.enqueue(pod["spec"]["nodeName"])

    # ------------------------------------------------------------- helpers
    def pushed_by(self, image):
        """(exists, Build that pushed it or None) for an internal-registry image."""
        path = image[len(catalog.INTERNAL_REGISTRY) + 1 :]
        if "@" in path:
            repo, digest = path.split("@", 1)
            tag = None
        else:
            repo, tag = path.rsplit(":", 1) if ":" in path else (path, "latest")
            digest = None
        if repo.count("/") != 1:
            return False, None
        namespace, stream_name = repo.split("/")
        stream = self.streams.get(stream_name, namespace)
        if stream is None:
            return False, None
        tags = (stream.get("status") or {}).get("tags") or []
        if digest is None:
            items = next((t.get("items") or [] for t in tags if t.get("tag") == tag), [])
            if not items:
                return False, None
            digest = items[0].get("image")
        elif not any(i.get("image") == digest for t in tags for i in t.get("items") or []):
            return False, None
        for build in self.builds.list(namespace):
            out = ((build.get("status") or {}).get("output") or {}).get("to") or {}
            if out.get("imageDigest") == digest:
                return True, build
        return True, None

    def registry_lookup(self, image):
        """(exists, kernel) for an internal-registry image, from the Build that pushed it."""
        if not self.openshift:
            return True, None
        exists, build = self.pushed_by(image)
        if build is None:
            return exists, None
        from simopenshift.builds import build_arg

        return True, build_arg(build, "KERNEL_VERSION")

    def image_contents(self, image):
        """images.Contents of an image (None: unknown to the simulator, not judged by contents)."""
        if self.openshift and image.startswith(catalog.INTERNAL_REGISTRY + "/"):
            build = self.pushed_by(image)[1]
            return images.built(build) if build is not None else None
        return images.public(image)

    def clock(self, pod, boot, now):
        uid = meta(pod).get("uid")
        clock = self.clocks.get(uid)
        if clock is None:
            restarts = max(
                [c.get("restartCount", 0) for c in (pod.get("status") or {}).get("containerStatuses") or []] + [0]
            )
            clock = PodClock(now, restarts, boot)
            phase = (pod.get("status") or {}).get("phase")
            clock.final = phase in ("Succeeded", "Failed")
            self.clocks[uid] = clock
        elif clock.boot != boot and not clock.final:
            # The node rebooted: containers start over.
            clock.started = now
            clock.restarts += 1
            clock.boot = boot
            clock.config = None  # a restarted plugin reads its config file again
            clock.config_pending = None
        return clock

    def host_ip(self, node):
        for address in (node.get("status") or {}).get("addresses") or []:
            if address.get("type") == "InternalIP":
                return address.get("address")
        return "127.0.0.1"

    def apply(self, node, pod, states, log=None, clock=None):
        """Write log then status (a reader that sees the status finds the log).

        A restarted container's previous run printed the same (``logs --previous``).
        """
        containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
        if log is not None:
            for name in containers:
                restarted = states[name].restarts > 0
                self.logs.write(pod, name, log, previous_text=log if restarted else None)
            self.logs.publish(pod, containers)
        elif any(state.kind == podsim.ContainerState.RUNNING for state in states.values()):
            # A container has its (empty) log from its start, as under a kubelet; publishing it now also gives kwok
            # time to see the Logs object before the pod shows terminated, when a reader asks for the log.
            self.logs.started(pod, containers)
        status = podsim.pod_status(pod, states, self.host_ip(node), clock.started if clock else time.time())
        if not podsim.same_status(pod.get("status"), status):
            if podsim.ended(states) and self.logs.is_published(pod):
                # A container that ended (Succeeded, Failed, restarted) is what readers read the log of as soon as
                # they see it: the log before the status, as a kubelet has it.
                self.logs.ensure_served(pod, containers[0])
            podsim.patch_pod_status(self.client, pod, status)
        if status["phase"] in ("Succeeded", "Failed") and clock is not None:
            clock.final = True

    def all_states(self, pod, state):
        return {c["name"]: state for c in (pod.get("spec") or {}).get("containers") or []}

    # ----------------------------------------------------------- reconcile
    # How soon a node whose pod waits for kwok to serve its log is looked at again.
    LOG_HELD_SECONDS = 0.5

    def reconcile(self, key):
        try:
            return self._reconcile(key)
        except podsim.LogNotServed as exc:
            if exc.first:
                self.log.info("node %s: %s; its status waits", key, exc)
            return self.LOG_HELD_SECONDS

    def _reconcile(self, key):
        node = self.nodes.get(key)
        if not node or meta(node).get("deletionTimestamp"):
            self.exporters.stop_node(key)
            return None
        pods = self.pods.on_node(key, lambda p: gpustack.agent_owned(p) and not meta(p).get("deletionTimestamp"))
        hw = catalog.NodeHardware.for_node(node)
        managed = bool(hw.instance_type) or catalog.ANN_GPU_COUNT in annotations_of(node)
        frozen = not node_ready(node) or catalog.LABEL_NOT_READY in labels_of(node)
        if frozen:
            self.exporters.stop_node(key)  # the node's network is gone with it
            return None  # kubelet down: nothing changes on the node
        info = (node.get("status") or {}).get("nodeInfo") or {}
        kernel = info.get("kernelVersion")
        os_release = catalog.parse_os_image(info.get("osImage"))
        boot = info.get("bootID")
        now = time.time()
        host_driver = gpustack.host_driver(node, managed)
        gpu_count = (
            hw.gpu_count
            if managed
            else int(((node.get("status") or {}).get("capacity") or {}).get(catalog.GPU_RESOURCE) or 0)
        )
        has_gpu = gpu_count > 0
        wake = []

        by = {}
        for pod in sorted(pods, key=lambda p: meta(p).get("creationTimestamp") or ""):
            by.setdefault(gpustack.component(pod), []).append(pod)

        missing = set(filter(None, (annotations_of(node).get(catalog.ANN_MISSING_IMAGES) or "").split(",")))
        if missing:
            for component, members in by.items():
                by[component] = [p for p in members if not self._pull_fails(node, p, missing, boot, now, wake)]

        for pod in by.pop(catalog.ENTITLEMENT_TEST, []):
            self._entitlement_test(node, pod, kernel, boot, now, wake)

        # 1. driver
        clients = [
            name_of(p)
            for c, ps in by.items()
            if c not in (DRIVER, TOOLKIT)
            for p in ps
            if (p.get("status") or {}).get("phase") == "Running"
        ]
        driver_ready, driver_version = self._drivers(
            node, by.get(DRIVER, []), hw, kernel, os_release, boot, now, wake, has_gpu, host_driver, clients
        )

        # 2. container toolkit
        toolkit_ready = bool(host_driver) and has_gpu
        toolkit_ready = self._toolkit(node, by.get(TOOLKIT, []), driver_ready, boot, now, wake) or toolkit_ready
        stack_ready = driver_ready and toolkit_ready
        rt = self._runtime_state(node, by.get(TOOLKIT, []), host_driver)
        plugin_pod = (by.get(PLUGIN) or [None])[0]

        # 3. device plugin -> node capacity
        plugin_ready = self._dependent(
            node,
            by.get(PLUGIN, []),
            stack_ready,
            boot,
            now,
            wake,
            "Starting GRPC server for 'nvidia.com/gpu'\n"
            "Registered device plugin for 'nvidia.com/gpu' with Kubelet\n",
            (PLUGIN, rt),
        )
        replicas, rename, strategy = self._sharing(node, by.get(PLUGIN, []), stack_ready, now, wake)
        mig_layout = self._mig(node, hw, gpu_count, by.get(PLUGIN, []), managed)
        if managed:
            if mig_layout:
                wanted = mig_layout.resources()
            else:
                wanted = {gpustack.SHARED_RESOURCE if rename else catalog.GPU_RESOURCE: gpu_count * replicas}
            self._capacity(node, wanted, bool(by.get(PLUGIN)), plugin_ready and stack_ready)
        elif host_driver and has_gpu:
            plugin_ready = True  # pre-provisioned node: its capacity is static

        # 4. GFD labels, 5. DCGM exporter
        gfd_labels, gfd_log, gfd_sharing = self._gfd_output(node, by.get(GFD, []))
        gfd_ready = self._dependent(node, by.get(GFD, []), stack_ready, boot, now, wake, gfd_log, (GFD, rt))
        replicas, rename, strategy = gfd_sharing or (replicas, rename, strategy)
        if managed:
            self._gfd(
                node, hw, gfd_ready and has_gpu and gfd_labels, driver_version, (replicas, strategy, rename), mig_layout
            )
        # The GPU Operator's validator: Ready once the stack and the device plugin are (its init containers
        # validate the driver, the toolkit, a CUDA workload and the plugin; gpu-operator cmd/nvidia-validator).
        self._dependent(
            node,
            by.pop(catalog.OPERATOR_VALIDATOR, []),
            stack_ready and plugin_ready,
            boot,
            now,
            wake,
            "all validations are successful\n",
            None,
        )
        gpu_pods = by.get(VALIDATION, []) + [p for c, ps in by.items() if c not in catalog.COMPONENTS for p in ps]
        self._exporters(
            node,
            by.get(DCGM, []),
            stack_ready,
            boot,
            now,
            wake,
            (hw, gpu_count, driver_version, mig_layout, rt),
            gpu_pods,
        )

        # 6. validation and GPU workloads
        workloads = by.get(VALIDATION, []) + [p for c, ps in by.items() if c not in catalog.COMPONENTS for p in ps]
        for pod in workloads:
            self._workload(
                node,
                pod,
                hw,
                gpu_count,
                (driver_ready, stack_ready, plugin_ready),
                driver_version,
                boot,
                now,
                wake,
                (plugin_pod, rt),
            )
        return min(wake) if wake else None

    def _exporters(self, node, pods, stack_ready, boot, now, wake, gpu_facts, gpu_pods):
        """dcgm-exporter pods: status like the other operands, plus a listener per Ready pod."""
        hw, gpu_count, driver_version, mig_layout, rt = gpu_facts
        down = annotations_of(node).get(ANN_EXPORTER) == "down"
        serving = set()
        for pod in pods:
            uid = meta(pod).get("uid")
            clock = self.clock(pod, boot, now)
            try:
                config = exporter.container_config(
                    pod,
                    name_of(node),
                    lambda name, ns=namespace_of(pod): (self.configmaps.get(name, ns) or {}).get("data"),
                )
                failure = None
            except ValueError as exc:
                config, failure = None, str(exc)
            if stack_ready and (down or failure):
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
                log = EXPORTER_CRASH_LOG.format(stamp)
                if failure:
                    log = 'time="{0}" level=fatal msg="{1}"\n'.format(stamp, failure)
                self._crash_loop(node, pod, log, clock, now - clock.started, now, wake)
                continue

            def listen(pod, uid=uid, config=config):
                if (pod.get("spec") or {}).get("hostNetwork") or not podsim.NETWORK.cidr:
                    return  # no pod IP of our own network: nothing the API server could reach
                gpus = exporter.node_gpus(name_of(node), hw.gpu_product, gpu_count, hw.gpu_memory_mib, mig_layout)
                running = [p for p in gpu_pods if (p.get("status") or {}).get("phase") == "Running"]
                view = (config, gpus, driver_version, exporter.allocation_map(running, gpu_count))
                self.exporter_views[uid] = view
                serving.add(uid)
                self.exporters.ensure(uid, name_of(node), podsim.pod_ip(pod), config.port, self._renderer(uid, view))

            self._dependent(
                node,
                [pod],
                stack_ready,
                boot,
                now,
                wake,
                "Starting dcgm-exporter\nDCGM successfully initialized!\n"
                "Collecting DCP Metrics\nStarting webserver\nListening on :%d\n" % config.port,
                (DCGM, rt),
                before_ready=listen,
            )
        self.exporters.stop_node(name_of(node), keep=serving)

    def _renderer(self, uid, view):
        def render():
            config, gpus, driver_version, allocations = self.exporter_views.get(uid, view)
            return exporter.render(config, gpus, driver_version, allocations, uptime=time.time() - self.started)

        return render

    def _drivers(self, node, pods, hw, kernel, os_release, boot, now, wake, has_gpu, host_driver, clients):
        """Run the node's driver pods; (driver ready, driver version).

        A new driver pod first unloads the modules an earlier one loaded (since the last boot); while GPU clients
        (device plugin, exporter, GFD, workloads) hold the device it cannot, and exits (gpu-driver-container
        ``_unload_driver``: "Could not unload NVIDIA driver kernel modules, driver is in use"), so it crash-loops
        until they are gone - which is why the GPU Operator drains GPU pods (k8s-driver-manager) before it
        replaces a driver.
        """
        phase_s = self.timing()
        driver_ready = bool(host_driver) and has_gpu
        driver_version = host_driver or catalog.DEFAULT_DRIVER_VERSION
        for pod in pods:
            clock = self.clock(pod, boot, now)
            container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
            version = gpustack.driver_version(container)
            verdict = gpustack.judge_driver(container, kernel, os_release, self.registry_lookup)
            run = None
            if not verdict.pull_error and has_gpu:
                run = gpustack.driver_run(
                    pod,
                    container,
                    self.image_contents(container.get("image", "")),
                    kernel,
                    hw.model.family if hw.model else None,
                    lambda: self.openshift and mco.node_entitlement(node, self.machineconfigs.get)[0],
                )
            age = now - clock.started
            loaded = self.loaded.get(name_of(node))
            uid = meta(pod).get("uid")
            if verdict.ok and has_gpu and loaded and loaded[1] == boot and loaded[0] != uid and clients:
                in_use = gpustack.DriverRun(
                    False,
                    ["Could not unload NVIDIA driver kernel modules, driver is in use"],
                    "driver in use by %s" % ", ".join(sorted(clients)[:5]),
                )
                self._driver_fails(node, pod, container, clock, age, now, wake, version, kernel, in_use)
            elif run is not None and not run.ok:
                self._driver_fails(node, pod, container, clock, age, now, wake, version, kernel, run)
            elif verdict.pull_error:
                self.kubelet_event(pod, "Failed", gpustack.pull_failure(container.get("image", "")))
                self.apply(
                    node, pod, self.all_states(pod, podsim.waiting("ImagePullBackOff", verdict.pull_error)), clock=clock
                )
                wake.append(phase_s)
            elif verdict.ok and has_gpu:
                ready = age >= phase_s
                self.apply(
                    node,
                    pod,
                    self.all_states(pod, podsim.running(clock.started, ready=ready, restarts=clock.restarts)),
                    gpustack.driver_log(version, kernel, verdict) if ready else None,
                    clock,
                )
                if ready:
                    driver_ready, driver_version = True, version
                    self.loaded[name_of(node)] = (uid, boot)
                else:
                    wake.append(phase_s - age)
            else:
                if not has_gpu:
                    verdict = gpustack.DriverVerdict(False, None, "no NVIDIA GPU found on this node")
                restarts = clock.restarts + int(age // phase_s)
                log = gpustack.driver_log(version, kernel, verdict)
                state = podsim.waiting(
                    "CrashLoopBackOff",
                    "back-off %ds restarting failed container=%s pod=%s_%s(%s)"
                    % (
                        min(10 * 2 ** max(restarts - 1, 0), 300),
                        container.get("name"),
                        name_of(pod),
                        namespace_of(pod),
                        meta(pod).get("uid"),
                    ),
                    restarts=max(restarts, 1),
                    last_exit_code=1,
                    last_finished=now,
                )
                self.apply(node, pod, self.all_states(pod, state), log, clock)
                wake.append(phase_s)

        return driver_ready, driver_version

    def _driver_fails(self, node, pod, container, clock, age, now, wake, version, kernel, run):
        """A driver container a real node would not run: exec error, or the driver script's failure and back-off."""
        restarts = clock.restarts + max(int(age // self.timing()), 1)
        if run.stuck:
            state = podsim.running(clock.started, ready=False, restarts=clock.restarts)
            self.apply(node, pod, self.all_states(pod, state), "\n".join(run.log) + "\n", clock)
            return
        if run.exec_error:
            state = podsim.waiting(
                "CrashLoopBackOff",
                "back-off restarting failed container=%s pod=%s_%s"
                % (container.get("name"), name_of(pod), namespace_of(pod)),
                restarts=restarts,
                last_exit_code=128,
                last_finished=now,
                last_reason="StartError",
                last_message=run.exec_error,
            )
            self.apply(node, pod, self.all_states(pod, state), run.exec_error + "\n", clock)
        else:
            log = gpustack.driver_log(version, kernel, gpustack.DriverVerdict(False, None, run.reason))
            log = log.rsplit("Could not resolve", 1)[0] + "\n".join(run.log) + "\n"
            self._crash_loop(node, pod, log, clock, age, now, wake)
            return
        wake.append(self.timing())

    def _crash_loop(self, node, pod, log, clock, age, now, wake):
        """A failing container under restartPolicy Always/OnFailure: CrashLoopBackOff, restarts growing."""
        restarts = clock.restarts + max(int(age // self.timing()), 1)
        state = podsim.waiting(
            "CrashLoopBackOff",
            "back-off restarting failed container",
            restarts=restarts,
            last_exit_code=1,
            last_finished=now,
        )
        self.apply(node, pod, self.all_states(pod, state), log, clock)
        wake.append(self.timing())

    def _entitlement_test(self, node, pod, kernel, boot, now, wake):
        """``dnf search kernel-devel`` in a UBI container: answered from the node's current rendered config."""
        clock = self.clock(pod, boot, now)
        if clock.final:
            return
        age = now - clock.started
        if age < self.timing(0.5):
            self.apply(node, pod, self.all_states(pod, podsim.waiting("ContainerCreating")), clock=clock)
            wake.append(self.timing(0.5) - age)
            return
        if age < self.timing(1.5):
            self.apply(
                node, pod, self.all_states(pod, podsim.running(clock.started, restarts=clock.restarts)), clock=clock
            )
            wake.append(self.timing(1.5) - age)
            return
        if self.openshift:
            entitled, why = mco.node_entitlement(node, self.machineconfigs.get)
        else:
            entitled, why = False, "no Machine Config Operator: nothing puts /etc/pki/entitlement on the node"
        exit_code, log = entitlement.dnf_output(entitlement.search_term(pod), kernel, entitled)
        restart_policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
        if exit_code and restart_policy != "Never":
            self._crash_loop(node, pod, log, clock, age, now, wake)
            return
        state = podsim.terminated(
            exit_code, clock.started, now, podsim.termination_message(pod, exit_code, log), clock.restarts
        )
        self.apply(node, pod, self.all_states(pod, state), log, clock)
        self.log.info(
            "entitlement test pod %s/%s on %s: %s%s",
            namespace_of(pod),
            name_of(pod),
            name_of(node),
            "entitled" if entitled else "not entitled",
            "" if entitled else " (%s)" % why,
        )

    def _handlers(self):
        """RuntimeClass name -> handler."""
        return dict((name_of(rc), rc.get("handler")) for rc in self.runtimeclasses.list())

    def _runtime_state(self, node, toolkit_pods, host_driver):
        """What the node's container runtime can do for GPU pods, from its Ready toolkit pod (runtime.py)."""
        for pod in toolkit_pods:
            statuses = (pod.get("status") or {}).get("containerStatuses") or []
            if statuses and all(c.get("ready") for c in statuses):
                return runtime.from_toolkit(node, ((pod.get("spec") or {}).get("containers") or [{}])[0])
        if host_driver:
            return runtime.host_toolkit()
        return runtime.NodeRuntime(
            why="no NVIDIA container toolkit runs on the node", runtime=runtime.runtime_version(node)[0] or "containerd"
        )

    def kubelet_event(self, pod, reason, message):
        """The Warning event the kubelet records for a pod it cannot start (pkg/kubelet/kuberuntime:
        FailedCreatePodSandBox "Failed to create pod sandbox: <err>"; Failed "Error: <err>" for a container that
        cannot be created; Failed "Failed to pull image ..." for a pull), once per pod and message."""
        key = (meta(pod).get("uid"), reason, message)
        if key in self.events_sent:
            return
        self.events_sent.add(key)
        self.client.event(dict(pod, kind="Pod", apiVersion="v1"), reason, message, "Warning", "kubelet")

    def _pull_fails(self, node, pod, missing, boot, now, wake):
        """True when a container's image is one the registry does not have (test lever ANN_MISSING_IMAGES): the
        kubelet reports ErrImagePull, then ImagePullBackOff, and retries with its back-off; nothing runs."""
        spec = pod.get("spec") or {}
        image = next(
            (
                c.get("image")
                for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
                if c.get("image") in missing
            ),
            None,
        )
        if image is None:
            return False
        clock = self.clock(pod, boot, now)
        self.kubelet_event(pod, "Failed", gpustack.pull_failure(image))
        state = podsim.waiting("ImagePullBackOff", 'Back-off pulling image "%s"' % image)
        self.apply(node, pod, self.all_states(pod, state), clock=clock)
        wake.append(self.timing())
        return True

    def _blocked(self, node, pod, clock, block):
        """A pod the runtime cannot start: sandbox (ContainerCreating) or container creation errors."""
        clock.started = time.time()
        if block.kind == "sandbox":
            state = podsim.waiting("ContainerCreating", block.message)
        else:
            state = podsim.waiting("CreateContainerError", block.message)
        before = [((c.get("state") or {}).get("waiting") or {}).get("message") for c in podsim.container_statuses(pod)]
        if block.kind == "sandbox":
            self.kubelet_event(pod, "FailedCreatePodSandBox", block.message)
        else:
            self.kubelet_event(pod, "Failed", "Error: " + block.message)
        self.apply(node, pod, self.all_states(pod, state), clock=clock)
        if block.message not in before:
            self.log.info("pod %s/%s on %s: %s", namespace_of(pod), name_of(pod), name_of(node), block.message[:160])

    def _dependent(
        self, node, pods, dependency_ready, boot, now, wake, log, needs_nvml=None, early_log=None, before_ready=None
    ):
        """Operand pods that need the driver (and toolkit) on the node.

        With an init container that waits for them (the GPU Operator's validation init containers) they stay in
        PodInitializing; without one the main container starts, fails and crash-loops with the kubelet's
        back-off, so it comes back only at its next restart after the dependency is up. An operand that needs
        NVML (device plugin, GFD, exporter) also needs what the runtime gives it (runtime.operand_block).
        """
        any_ready = False
        for pod in pods:
            clock = self.clock(pod, boot, now)
            block = runtime.operand_block(pod, needs_nvml[1], self._handlers(), needs_nvml[0]) if needs_nvml else None
            if block is not None and (dependency_ready or block.kind == "sandbox"):
                if block.kind == "crash":
                    self._crash_loop(node, pod, block.log, clock, now - clock.started, now, wake)
                else:
                    self._blocked(node, pod, clock, block)
                continue
            if not dependency_ready:
                if runtime.waits_for_dependency(pod):
                    clock.started = now  # the main container has not started yet
                    self.apply(node, pod, self.all_states(pod, podsim.waiting("PodInitializing")), clock=clock)
                else:
                    clock.crashing_since = clock.crashing_since or now
                    early = early_log or runtime.NVML_MISSING_LOG
                    self._crash_loop(node, pod, early, clock, now - clock.crashing_since, now, wake)
                continue
            if clock.crashing_since is not None:
                if self._backing_off(node, pod, clock, now, wake):
                    continue
            age = now - clock.started
            ready = age >= self.timing(0.5)
            if ready and before_ready is not None:
                # A readiness probe (the exporter's httpGet /health) passes only once the server answers: the
                # kubelet posts Ready after that, so the server is up before the status says so.
                before_ready(pod)
            self.apply(
                node,
                pod,
                self.all_states(pod, podsim.running(clock.started, ready=ready, restarts=clock.restarts)),
                log if ready else None,
                clock,
            )
            if ready:
                any_ready = True
            else:
                wake.append(self.timing(0.5) - age)
        return any_ready

    def _backing_off(self, node, pod, clock, now, wake):
        """True while a crash-looped operand waits out its back-off after its dependency came up."""
        restarts = clock.restarts + max(int((now - clock.crashing_since) // self.timing()), 1)
        if clock.resume_at is None:
            delay = min(10 * 2 ** max(restarts - 1, 0), 300)  # the kubelet's back-off, in seconds
            clock.resume_at = now + self.timing(delay / 10.0)  # one phase stands for 10 s of a real node
        if now < clock.resume_at:
            wake.append(clock.resume_at - now)
            return True
        clock.started, clock.restarts = clock.resume_at, restarts
        clock.crashing_since = clock.resume_at = None
        return False

    def _toolkit(self, node, pods, driver_ready, boot, now, wake):
        """nvidia-ctk-installer: configures the runtime its RUNTIME env names; another runtime's node crash-loops it."""
        any_ready = False
        runtime_of_node = gpustack.node_runtime(node)
        for pod in pods:
            container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
            ok, _runtime, log = gpustack.toolkit_run(container, runtime_of_node)
            if ok or not driver_ready:
                early = (
                    'level=error msg="error running nvidia-toolkit: unable to setup runtime: failed to generate CDI '
                    'spec: failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND"\n'
                )
                any_ready = self._dependent(node, [pod], driver_ready, boot, now, wake, log, None, early) or any_ready
                continue
            clock = self.clock(pod, boot, now)
            self._crash_loop(node, pod, log, clock, now - clock.started, now, wake)
        return any_ready

    def _gfd_output(self, node, pods):
        """(labels on the node?, log, sharing) of GFD.

        With USE_NODE_FEATURE_API (GFD's default) GFD writes a NodeFeature object, which becomes labels only where
        NFD's master reads NodeFeature objects: upstream NFD (the kubernetes profile) does, the Red Hat NFD of the
        openshift profile does not (hence the GPU Operator's USE_NODE_FEATURE_API=false there). Sharing:
        (replicas, rename, strategy) from GFD's own config map when it mounts one that shares, else None (the
        device plugin's is used then).
        """
        container = (((pods or [{}])[0].get("spec") or {}).get("containers") or [{}])[0]
        live = self._live_sharing(node, pods[0]) if pods else None
        sharing = live[0] if live and live[0][2] != "none" else None
        if not gpustack.gfd_uses_node_feature_api(container):
            log = "Start running\nCreating Labels\nWriting labels to output file %s/gfd\nSleeping for 60s\n" % (
                "/etc/kubernetes/node-feature-discovery/features.d"
            )
            return True, log, sharing
        log = "Start running\nCreating Labels\nUpdating NodeFeature object nvidia-features-for-%s\nSleeping for 60s\n"
        return not self.openshift, log % name_of(node), sharing

    def _sharing(self, node, plugin_pods, started, now, wake):
        """(replicas, rename, strategy) the node's device plugin runs with.

        A real plugin reads its config file once, when its container starts: a later edit of the ConfigMap or of
        the node's ``nvidia.com/device-plugin.config`` label reaches it only through a new pod (e.g. a DaemonSet
        rolled by a checksum annotation) - the GPU Operator's known "edits not picked up". With upstream's
        ``config-manager`` sidecar a change of the node LABEL is followed (after a short sync delay: the sidecar
        re-links the config file and SIGHUPs the plugin, which re-reads the file kubelet refreshed); an edit of
        the ConfigMap's content under an unchanged label is not (config-manager watches only the label, see
        NVIDIA/k8s-device-plugin cmd/config-manager/main.go).
        """
        for pod in plugin_pods:
            live = self._live_sharing(node, pod)
            if live is None:
                continue
            config, key = live
            clock = self.clocks.get(meta(pod).get("uid"))
            if clock is None or not started:
                return config  # the plugin container has not started yet: it reads the config when it does
            if clock.config is None:
                clock.config, clock.config_key, clock.config_pending = config, key, None
            elif key != clock.config_key and gpustack.has_config_manager(pod):
                if clock.config_pending is None:
                    clock.config_pending = now
                waited = now - clock.config_pending
                if waited >= self.timing(gpustack.CONFIG_MANAGER_DELAY):
                    clock.config, clock.config_key, clock.config_pending = config, key, None
                    self.log.info("node %s: config-manager switched the device plugin to config %r", name_of(node), key)
                else:
                    wake.append(self.timing(gpustack.CONFIG_MANAGER_DELAY) - waited)
            elif key == clock.config_key:
                clock.config_pending = None
            return clock.config
        return 1, False, "none"

    def _live_sharing(self, node, pod):
        """((replicas, rename, strategy), selected key) from the pod's config map as it is now, or None."""
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            ref = volume.get("configMap") or {}
            cm = self.configmaps.get(ref.get("name"), namespace_of(pod)) if ref.get("name") else None
            if cm and cm.get("data"):
                default = gpustack.pod_env(pod, "DEFAULT_CONFIG")
                key = labels_of(node).get(gpustack.CONFIG_LABEL) or default
                return gpustack.sharing_config(cm["data"], labels_of(node), default), key
        return None

    def _mig(self, node, hw, gpu_count, plugin_pods, managed):
        """The node's MIG layout (nvidia.com/mig.config + the plugin's MIG_STRATEGY); reports the config state."""
        if not managed:
            return None
        container = (((plugin_pods or [{}])[0].get("spec") or {}).get("containers") or [{}])[0]
        strategy = gpustack.container_env(container, "MIG_STRATEGY") or "none"
        layout, state = mig.mig_state(labels_of(node), hw.model, gpu_count, hw.gpu_memory_mib, strategy)
        if labels_of(node).get(mig.MIG_STATE_LABEL) != state:
            self.client.patch(NODES, name_of(node), {"metadata": {"labels": {mig.MIG_STATE_LABEL: state}}})
        return layout

    def _capacity(self, node, wanted, plugin_present, healthy):
        """Extended resources as the device plugin registers them (``wanted``: {resource: count})."""
        status = node.get("status") or {}
        capacity = status.get("capacity") or {}
        allocatable = status.get("allocatable") or {}
        managed = set(wanted) | {catalog.GPU_RESOURCE, gpustack.SHARED_RESOURCE}
        managed |= {r for r in list(capacity) + list(allocatable) if r.startswith(mig.MIG_RESOURCE_PREFIX)}
        patch_cap, patch_alloc = {}, {}
        for resource in sorted(managed):
            count = wanted.get(resource) or 0
            want_cap = want_alloc = None
            if plugin_present and count and (healthy or capacity.get(resource)):
                want_cap = str(count)
                want_alloc = want_cap if healthy else "0"
            if capacity.get(resource) != want_cap:
                patch_cap[resource] = want_cap
            if allocatable.get(resource) != want_alloc:
                patch_alloc[resource] = want_alloc
        if patch_cap or patch_alloc:
            body = {"status": {}}
            if patch_cap:
                body["status"]["capacity"] = patch_cap
            if patch_alloc:
                body["status"]["allocatable"] = patch_alloc
            self.client.patch(NODES, name_of(node), body, subresource="status")
            self.log.info("node %s: capacity %s allocatable %s", name_of(node), patch_cap, patch_alloc)

    def _gfd(self, node, hw, ready, driver_version, sharing, mig_layout):
        labels = labels_of(node)
        replicas, strategy, rename = sharing
        if ready:
            stamp = self.gfd_stamp.setdefault(name_of(node), int(time.time()))
            wanted = gpustack.gfd_labels(node, hw, driver_version, replicas, strategy, stamp, rename=rename)
            if mig_layout:
                wanted = mig_layout.gfd_labels(wanted)
            wanted[gpustack.GFD_PREFIX + "gfd.timestamp"] = labels.get(
                gpustack.GFD_PREFIX + "gfd.timestamp", str(stamp)
            )
        else:
            wanted = {}
            self.gfd_stamp.pop(name_of(node), None)
        patch = {k: v for k, v in wanted.items() if labels.get(k) != v}
        for key in gpustack.GFD_KEYS:
            full = gpustack.GFD_PREFIX + key
            if full in labels and full not in wanted:
                patch[full] = None
        for full in labels:
            if mig.is_mig_label(full) and full not in wanted:
                patch[full] = None
        if patch:
            # GFD's labels reach the node through NFD (its features.d file, or its NodeFeature object on upstream
            # NFD): nfd-master writes them, under the same managedFields entry as NFD's own labels.
            self.client.patch(NODES, name_of(node), {"metadata": {"labels": patch}}, field_manager=nfd.FIELD_MANAGER)

    def _workload_output(self, node, pod, kind, hw, visible, driver_version):
        """(log, exit status) of a GPU workload the stack serves: nvidia-smi's table, vectorAdd's text, or DCGM's
        diagnostics (the GPU the node's lever annotation names failing its memory test)."""
        if kind == "nvidia-smi":
            cuda = catalog.cuda_version(driver_version)
            return (
                gpustack.nvidia_smi(hw.gpu_product or "Tesla-T4", visible, hw.gpu_memory_mib, driver_version, cuda),
                0,
            )
        if kind == "vectoradd":
            return gpustack.VECTOR_ADD_OK, 0
        if kind == "dcgm-diag":
            failing = annotations_of(node).get(ANN_DCGM_DIAG_FAIL)
            return gpustack.dcgm_diag(
                visible,
                gpustack.dcgm_command_level(pod),
                int(failing) if failing and failing.isdigit() else None,
                driver_version,
            )
        return "", 0

    def _workload(self, node, pod, hw, gpu_count, readiness, driver_version, boot, now, wake, plugin_rt):
        driver_ready, stack_ready, plugin_ready = readiness
        plugin_pod, rt = plugin_rt
        clock = self.clock(pod, boot, now)
        if clock.final:
            return
        status = pod.get("status") or {}
        if (
            status.get("phase") == "Running"
            and gpustack.workload_seconds(pod) is None
            and all("running" in (c.get("state") or {}) for c in status.get("containerStatuses") or [{}])
            # not since a reboot (the clock counted a restart the status does not show yet)
            and clock.restarts == max([c.get("restartCount", 0) for c in status.get("containerStatuses") or []] + [0])
        ):
            # A GPU program that runs keeps its device: the device plugin or GFD leaving (they only allocate and
            # label) does not stop it, as on a node (k8s-device-plugin: a restarted plugin leaves running pods alone).
            return
        requested = gpustack.gpu_request(pod)
        kind = gpustack.workload_kind(pod)
        ok = stack_ready and gpu_count > 0 and (requested == 0 or plugin_ready)
        block = runtime.workload_block(pod, rt, self._handlers(), plugin_pod, requested) if ok else None
        if block is not None and block.kind in ("sandbox", "create"):
            self._blocked(node, pod, clock, block)
            return
        if block is not None:
            ok = False
        restart_policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
        age = now - clock.started
        if age < self.timing(0.5):
            self.apply(node, pod, self.all_states(pod, podsim.waiting("ContainerCreating")), clock=clock)
            wake.append(self.timing(0.5) - age)
            return
        visible = min(requested or gpu_count, gpu_count) if gpu_count else 0
        diag_exit = 0
        if ok:
            log, diag_exit = self._workload_output(node, pod, kind, hw, visible, driver_version)
        elif kind == "dcgm-diag":
            log = gpustack.DCGM_NO_ENGINE
        elif not gpu_count:
            log = (
                gpustack.vector_add_failure("no CUDA-capable device is detected")
                if kind != "nvidia-smi"
                else gpustack.NVIDIA_SMI_NO_DRIVER
            )
        elif not driver_ready:
            log = (
                gpustack.NVIDIA_SMI_NO_DRIVER
                if kind == "nvidia-smi"
                else gpustack.vector_add_failure("CUDA driver version is insufficient for CUDA runtime version")
            )
        elif block is not None:
            # Device nodes but no driver libraries: the CUDA runtime finds no driver, nvidia-smi is not there.
            log = (
                gpustack.exec_error("nvidia-smi") + "\n"
                if kind == "nvidia-smi"
                else gpustack.vector_add_failure("CUDA driver version is insufficient for CUDA runtime version")
            )
        else:
            log = (
                "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
                "cannot open shared object file: no such file or directory\n"
            )
        runs_for = gpustack.workload_seconds(pod) if ok else 0
        if restart_policy in ("Never", "OnFailure") and (ok or restart_policy == "Never") and runs_for is not None:
            # The program runs for a while (Running, as the kubelet reports it)
            # before it exits; a vectorAdd/nvidia-smi pod is not instantaneous, a `sleep N` takes N seconds.
            runs_for = max(self.timing(1.5), runs_for)
            if age < runs_for:
                self.apply(
                    node, pod, self.all_states(pod, podsim.running(clock.started, restarts=clock.restarts)), clock=clock
                )
                wake.append(runs_for - age)
                return
            exit_code = (diag_exit if kind == "dcgm-diag" else 0) if ok else 1
            state = podsim.terminated(
                exit_code, clock.started, now, podsim.termination_message(pod, exit_code, log), clock.restarts
            )
            self.apply(node, pod, self.all_states(pod, state), log, clock)
            self.log.info(
                "pod %s/%s on %s: %s", namespace_of(pod), name_of(pod), name_of(node), "Succeeded" if ok else "Failed"
            )
            return
        if ok:  # long-running GPU workload (a server, a training job, `sleep infinity`): Running until deleted
            self.apply(
                node, pod, self.all_states(pod, podsim.running(clock.started, restarts=clock.restarts)), log, clock
            )
            return
        self._crash_loop(node, pod, log, clock, age, now, wake)
