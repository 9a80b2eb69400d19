#!/usr/bin/env python3
"""Runs the pods of a rendered Waymark chart as local processes and checks them.

    run_rendered.py --manifests RENDERED.yaml --namespace NS --bin-dir DIR --work DIR

RENDERED.yaml is `helm template` output. Every StatefulSet replica becomes a
process started with its container's command, args and env, as Kubernetes
would start it, after these substitutions (printed for every pod):

* Pod networking: each pod has its own network namespace in Kubernetes, so
  every pod may use the same container ports. Here all pods share 127.0.0.1,
  so each (pod, container port) gets a local port of its own, chosen below
  the kernel's ephemeral range and unused at the time (as
  crates/rmq-testkit/src/ports.rs chooses); a start that still finds a port
  taken is retried with fresh ports. In args, env values and mounted files,
  `HOST:PORT` with PORT a container port is rewritten: 0.0.0.0:PORT to
  0.0.0.0:<the pod's local port>, <pod IP>:PORT to 127.0.0.1:<the pod's local
  port>, and <stable DNS name of a pod of the same StatefulSet>:PORT
  (<sts>-<i>.<headless service>.<namespace>.svc.<clusterDomain>) to
  127.0.0.1:<that pod's local port>, in one pass. A properties line `listenPort=PORT` is rewritten the same way. Any
  other name ending in .svc.<clusterDomain> is an error: the chart named a
  pod that does not exist.
* The downward API: metadata.name is the pod name, metadata.namespace the
  namespace, status.podIP 127.0.0.1. $(VAR) references in command, args and
  env values are expanded from the container's env, as the kubelet does.
* Volumes: each volumeMount is a directory of the pod's own; ConfigMap
  volumes hold the ConfigMap's files. Paths under a mount path in args, env
  values and mounted files are rewritten to that directory.
* The image: its ENV HOME (read from the Dockerfile) is rewritten like any
  mounted path; its /usr/local/bin is --bin-dir, first on PATH.

Then, polling to a deadline: each liveness and readiness probe's httpGet path
answers 200-399 on the mapped port; the NameServers form one cluster (GET
/api/v1/cluster on each: ready, every other pod a live member; the address
server, /rocketmq/nsaddr, lists every pod); the
controllers form one group with one leader (GET /api/v1/controller on each:
one group, one leader that every node names, exactly one node that is it);
and no start-up warning other than the authentication notice appears.

Exit status 0 when every check passes, 1 otherwise.
"""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

ALLOWED_WARNINGS = (
    # Authentication is off unless configured, as in Java; the server says
    # so on every start, on purpose (docs/security.md).
    "AUTHENTICATION IS OFF",
)
BIND_FAILURES = ("Address already in use", "address already in use", "cannot bind", "cannot listen")


def fail(message):
    print(f"run_rendered: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------
# Ports
# ---------------------------------------------------------------------------


def candidate_range():
    low = 10_000
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral = int(f.read().split()[0])
        if ephemeral - 1 - low >= 2_000:
            return low, ephemeral - 1
    except (OSError, ValueError, IndexError):
        pass
    return low, 32_767


def ports_in_use():
    """Every local port any TCP or UDP socket uses now, from /proc/net."""
    used = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    fields = line.split()
                    if len(fields) > 1 and ":" in fields[1]:
                        used.add(int(fields[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return used


def can_bind(port):
    import socket

    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(socket.AF_INET, kind)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
        finally:
            s.close()
    return True


class PortChooser:
    def __init__(self):
        self.low, self.high = candidate_range()
        self.given = set()

    def choose(self):
        used = ports_in_use()
        for _ in range(500):
            port = random.randint(self.low, self.high)
            if port in used or port in self.given:
                continue
            if can_bind(port):
                self.given.add(port)
                return port
        fail(f"no free port found in {self.low}-{self.high}")


# ---------------------------------------------------------------------------
# Manifests
# ---------------------------------------------------------------------------


def load(path):
    with open(path) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def static_checks(docs):
    """What the rendered objects must say for the pods to find each other and
    for Services to reach the right ports."""
    services = [d for d in docs if d["kind"] == "Service"]
    stses = [d for d in docs if d["kind"] == "StatefulSet"]
    if not stses:
        fail("no StatefulSet rendered")
    for sts in stses:
        name = sts["metadata"]["name"]
        spec = sts["spec"]
        labels = spec["template"]["metadata"]["labels"]
        if not selects(spec["selector"]["matchLabels"], labels):
            fail(f"StatefulSet {name}: its selector does not select its pods")
        headless = [s for s in services if s["metadata"]["name"] == spec["serviceName"]]
        if not headless:
            fail(f"StatefulSet {name}: no Service {spec['serviceName']}")
        hl = headless[0]["spec"]
        if hl.get("clusterIP") != "None" or not hl.get("publishNotReadyAddresses"):
            fail(f"Service {spec['serviceName']}: not headless with publishNotReadyAddresses")
        container = spec["template"]["spec"]["containers"][0]
        port_names = {p["name"] for p in container.get("ports", [])}
        for probe in ("livenessProbe", "readinessProbe"):
            get = container.get(probe, {}).get("httpGet")
            if not get:
                fail(f"StatefulSet {name}: no httpGet {probe}")
            if get["port"] not in port_names and not isinstance(get["port"], int):
                fail(f"StatefulSet {name}: {probe} port {get['port']} is no container port")
        for svc in services:
            if not selects(svc["spec"].get("selector"), labels):
                continue
            for port in svc["spec"]["ports"]:
                target = port.get("targetPort", port["port"])
                if isinstance(target, str) and target not in port_names:
                    fail(f"Service {svc['metadata']['name']}: targetPort {target} is no port of {name}")
    for pdb in (d for d in docs if d["kind"] == "PodDisruptionBudget"):
        sel = pdb["spec"]["selector"]["matchLabels"]
        if not any(selects(sel, s["spec"]["template"]["metadata"]["labels"]) for s in stses):
            fail(f"PodDisruptionBudget {pdb['metadata']['name']} selects no pods")
    namesrv = [s for s in stses if s["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component") == "namesrv"]
    for sts in namesrv:
        labels = sts["spec"]["template"]["metadata"]["labels"]
        clients = [
            s for s in services
            if s["spec"].get("clusterIP") != "None" and selects(s["spec"].get("selector"), labels)
        ]
        if not clients:
            fail(f"no client Service for {sts['metadata']['name']}")
        for svc in clients:
            if svc["spec"].get("publishNotReadyAddresses"):
                fail(f"client Service {svc['metadata']['name']} would route to pods that are not ready")
            names = {p["name"] for p in svc["spec"]["ports"]}
            if not {"remoting", "http"} <= names:
                fail(f"client Service {svc['metadata']['name']} lacks the remoting or HTTP port")
    print(f"static checks: {len(stses)} StatefulSet(s), {len(services)} Service(s): selectors, headless Services, probe and Service ports agree")


def image_home(dockerfile):
    home = None
    with open(dockerfile) as f:
        for line in f:
            m = re.match(r"\s*ENV\s+HOME=(\S+)", line)
            if m:
                home = m.group(1)
    if not home:
        fail(f"{dockerfile}: no ENV HOME")
    return home


# ---------------------------------------------------------------------------
# Pods
# ---------------------------------------------------------------------------


class Pod:
    def __init__(self, sts, ordinal, namespace, domain):
        self.sts = sts
        self.sts_name = sts["metadata"]["name"]
        self.name = f"{self.sts_name}-{ordinal}"
        self.ordinal = ordinal
        self.dns = f"{self.name}.{sts['spec']['serviceName']}.{namespace}.svc.{domain}"
        self.labels = sts["spec"]["template"]["metadata"]["labels"]
        self.component = self.labels.get("app.kubernetes.io/component", "")
        self.container = sts["spec"]["template"]["spec"]["containers"][0]
        self.ports = {}  # container port -> local port
        self.port_names = {p["name"]: p["containerPort"] for p in self.container.get("ports", [])}
        self.process = None
        self.stdout = self.stderr = None

    def local(self, port_name):
        return self.ports[self.port_names[port_name]]


class Launch:
    """One attempt at starting every pod."""

    def __init__(self, args, docs, chooser, attempt):
        self.args = args
        self.docs = docs
        self.namespace = args.namespace
        self.domain = args.cluster_domain
        self.home = image_home(args.dockerfile)
        self.root = os.path.join(args.work, f"attempt-{attempt}")
        os.makedirs(self.root)
        self.pods = []
        for sts in (d for d in docs if d["kind"] == "StatefulSet"):
            for i in range(sts["spec"].get("replicas", 1)):
                self.pods.append(Pod(sts, i, self.namespace, self.domain))
        for pod in self.pods:
            for port in pod.port_names.values():
                pod.ports[port] = chooser.choose()
        self.configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}

    # -- substitution ------------------------------------------------------

    def rewrite(self, pod, text, mounts):
        peers = {p.dns: p for p in self.pods if p.sts_name == pod.sts_name}
        own = ("0.0.0.0", "127.0.0.1")  # a wildcard, or the pod IP as given here

        def address(m):
            host, port = m.group(1), int(m.group(2))
            if host in own:
                # A wildcard stays one (gossip then advertises the pod IP's
                # host, as in a pod); the pod IP becomes 127.0.0.1.
                return f"{host}:{pod.ports[port]}" if port in pod.ports else m.group(0)
            target = peers[host]
            if port not in target.ports:
                fail(f"{pod.name}: {host}:{port} names no port of {target.name}")
            return f"127.0.0.1:{target.ports[port]}"

        # One pass, so that a port already rewritten is never rewritten again.
        hosts = "|".join(re.escape(h) for h in sorted(list(peers) + list(own), key=len, reverse=True))
        text = re.sub(r"(?<![A-Za-z0-9.])(" + hosts + r"):(\d+)(?!\d)", address, text)
        text = re.sub(
            r"(?m)^(\s*listenPort\s*[=:]\s*)(\d+)\s*$",
            lambda m: m.group(1) + str(pod.ports.get(int(m.group(2)), m.group(2))),
            text,
        )
        for mount, local in sorted(mounts.items(), key=lambda kv: -len(kv[0])):
            text = re.sub(r"(?<![\w./-])" + re.escape(mount) + r"(?=/|\b|$)", local, text)
        unknown = re.findall(r"[A-Za-z0-9.\-]+\.svc\." + re.escape(self.domain), text)
        if unknown:
            fail(f"{pod.name}: names no pod of its StatefulSet: {', '.join(sorted(set(unknown)))}")
        return text

    def prepare(self, pod):
        base = os.path.join(self.root, pod.name)
        mounts = {}
        volumes = {v["name"]: v for v in pod.sts["spec"]["template"]["spec"].get("volumes", [])}
        for mount in pod.container.get("volumeMounts", []):
            local = os.path.join(base, "volumes", mount["name"])
            os.makedirs(local, exist_ok=True)
            mounts[mount["mountPath"]] = local
        if self.home not in mounts:
            mounts[self.home] = os.path.join(base, "image-home")
            os.makedirs(mounts[self.home], exist_ok=True)
        for mount in pod.container.get("volumeMounts", []):
            volume = volumes.get(mount["name"])
            if volume and "configMap" in volume:
                cm = self.configmaps.get(volume["configMap"]["name"])
                if cm is None:
                    fail(f"{pod.name}: ConfigMap {volume['configMap']['name']} is not rendered")
                for key, content in cm.get("data", {}).items():
                    with open(os.path.join(mounts[mount["mountPath"]], key), "w") as f:
                        f.write(self.rewrite(pod, content, mounts))

        env = {}
        for item in pod.container.get("env", []):
            if "value" in item:
                value = item["value"]
            else:
                field = item["valueFrom"]["fieldRef"]["fieldPath"]
                value = {"metadata.name": pod.name, "metadata.namespace": self.namespace, "status.podIP": "127.0.0.1"}.get(field)
                if value is None:
                    fail(f"{pod.name}: env {item['name']} from {field}, which this check does not provide")
            env[item["name"]] = expand(value, env)
        env = {k: self.rewrite(pod, v, mounts) for k, v in env.items()}
        command = [expand(a, env) for a in pod.container.get("command", [])]
        if not command:
            fail(f"{pod.name}: no command (the check runs what the container names)")
        argv = command + [self.rewrite(pod, expand(a, env), mounts) for a in pod.container.get("args", [])]
        full_env = {"PATH": f"{self.args.bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": mounts[self.home]}
        full_env.update(env)
        return argv, full_env, mounts, base

    # -- running -----------------------------------------------------------

    def start(self):
        for pod in self.pods:
            argv, env, mounts, base = self.prepare(pod)
            print(f"--- {pod.name} ({pod.dns})")
            print("    ports: " + ", ".join(f"{c}->{l}" for c, l in sorted(pod.ports.items())))
            print("    mounts: " + ", ".join(f"{m}->{l}" for m, l in sorted(mounts.items())))
            print("    env: " + " ".join(f"{k}={v}" for k, v in env.items() if k != "PATH"))
            print("    exec: " + " ".join(argv))
            pod.stdout = os.path.join(base, "stdout")
            pod.stderr = os.path.join(base, "stderr")
            with open(pod.stdout, "w") as out, open(pod.stderr, "w") as err:
                pod.process = subprocess.Popen(argv, env=env, stdout=out, stderr=err, cwd=mounts[self.home], start_new_session=True)

    def stop(self):
        for pod in self.pods:
            if pod.process and pod.process.poll() is None:
                os.killpg(pod.process.pid, signal.SIGTERM)
        for pod in self.pods:
            if pod.process:
                try:
                    pod.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(pod.process.pid, signal.SIGKILL)
                    pod.process.wait()

    def exited(self):
        """(pod, its stderr) of the first pod whose process ended."""
        for pod in self.pods:
            if pod.process.poll() is not None:
                with open(pod.stderr) as f:
                    return pod, f.read()
        return None


def expand(value, env):
    """The kubelet's $(VAR) expansion; $$ escapes."""

    def one(m):
        if m.group(0).startswith("$$"):
            return m.group(0)[1:]
        name = m.group(1)
        return env.get(name, m.group(0))

    return re.sub(r"\$\$\([A-Za-z_][A-Za-z0-9_]*\)|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", one, value)


# The chart leaves addressServerSubgroup at its default.
ADDRESS_SUBGROUP = "nsaddr"


def http_get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except (urllib.error.URLError, OSError):
        return None, ""


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def probes_pass(launch):
    pending = []
    for pod in launch.pods:
        for probe in ("livenessProbe", "readinessProbe"):
            get = pod.container[probe]["httpGet"]
            port = get["port"]
            local = pod.local(port) if isinstance(port, str) else pod.ports[port]
            status, _ = http_get(local, get["path"])
            if status is None or not 200 <= status < 400:
                pending.append(f"{pod.name} {probe} GET {get['path']}: {status}")
    return pending


def cluster_formed(launch):
    nodes = [p for p in launch.pods if p.component == "namesrv"]
    if not nodes:
        return [], []
    names = {f"127.0.0.1:{p.local('remoting')}" for p in nodes}
    pending, views = [], []
    for pod in nodes:
        status, body = http_get(pod.local("http"), "/api/v1/cluster")
        if status != 200:
            pending.append(f"{pod.name} /api/v1/cluster: {status}")
            continue
        view = json.loads(body)
        if len(nodes) > 1 and not view.get("enabled"):
            pending.append(f"{pod.name}: the cluster is off")
            continue
        if not view.get("enabled"):
            views.append(f"{pod.name}: one NameServer, cluster off")
            continue
        me = view["node"]["name"]
        live = {m["name"] for m in view.get("members", []) if m.get("liveness") == "live"}
        missing = names - live - {me}
        if not view["node"].get("ready") or missing or me not in names:
            pending.append(f"{pod.name} ({me}): ready={view['node'].get('ready')}, not live yet: {sorted(missing)}")
            continue
        # The address server lists the members that are live and ready: once
        # all are, every pod's list is every pod, as brokers and clients
        # reading -Drocketmq.namesrv.domain=<client Service>:<http port> see it.
        status, listed = http_get(pod.local("http"), f"/rocketmq/{ADDRESS_SUBGROUP}")
        if status != 200 or set(listed.split(";")) != names:
            pending.append(f"{pod.name} /rocketmq/{ADDRESS_SUBGROUP}: {status} {listed!r}")
            continue
        views.append(f"{pod.name} ({me}): ready, live members {sorted(live)}, address server lists all {len(names)}")
    return pending, views


def group_formed(launch):
    nodes = [p for p in launch.pods if p.component == "controller"]
    if not nodes:
        return [], []
    answers = {}
    for pod in nodes:
        status, body = http_get(pod.local("http"), "/api/v1/controller")
        if status != 200:
            return [f"{pod.name} /api/v1/controller: {status}"], []
        answers[pod.name] = json.loads(body)
    groups = {a["group"] for a in answers.values()}
    leaders = {a.get("leader") for a in answers.values()}
    claiming = [name for name, a in answers.items() if a.get("isLeader")]
    if len(groups) != 1 or len(leaders) != 1 or None in leaders or len(claiming) != 1:
        return [f"groups {sorted(groups)}, leaders {sorted(map(str, leaders))}, claiming {claiming}"], []
    leader_pod = next(p for p in nodes if p.name == claiming[0])
    if answers[leader_pod.name].get("self") != answers[leader_pod.name].get("leader"):
        return [f"{leader_pod.name} claims leadership but names {answers[leader_pod.name].get('leader')}"], []
    return [], [f"group {groups.pop()}: {len(nodes)} nodes, leader {claiming[0]} ({leaders.pop()}), named by every node"]


def warnings(launch):
    found = []
    for pod in launch.pods:
        with open(pod.stderr) as f:
            for line in f:
                if " WARN " in line and not any(a in line for a in ALLOWED_WARNINGS):
                    found.append(f"{pod.name}: {line.strip()}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifests", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--cluster-domain", default="cluster.local")
    parser.add_argument("--bin-dir", required=True, help="stands in for the image's /usr/local/bin")
    parser.add_argument("--dockerfile", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--deadline", type=float, default=60.0, help="seconds for the pods to pass every check")
    args = parser.parse_args()

    docs = load(args.manifests)
    static_checks(docs)
    chooser = PortChooser()
    launch = None

    def terminate(signum, _frame):
        if launch:
            launch.stop()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)
    started = time.monotonic()
    try:
        for attempt in range(1, 4):
            launch = Launch(args, docs, chooser, attempt)
            launch.start()
            deadline = time.monotonic() + args.deadline
            retry = False
            while True:
                gone = launch.exited()
                if gone:
                    pod, log = gone
                    if any(b in log for b in BIND_FAILURES):
                        print(f"{pod.name} found a port taken meanwhile: starting again on fresh ports")
                        retry = True
                        break
                    fail(f"{pod.name} exited with status {pod.process.returncode}:\n{log}")
                pending = probes_pass(launch)
                cluster_pending, cluster_views = cluster_formed(launch)
                group_pending, group_views = group_formed(launch)
                pending += cluster_pending + group_pending
                if not pending:
                    break
                if time.monotonic() > deadline:
                    for pod in launch.pods:
                        with open(pod.stderr) as f:
                            print(f"--- {pod.name} stderr\n{f.read()}", file=sys.stderr)
                    fail(f"not within {args.deadline:.0f}s:\n  " + "\n  ".join(pending))
                time.sleep(0.25)
            if retry:
                launch.stop()
                continue
            elapsed = time.monotonic() - started
            print(f"probes: liveness and readiness answer 2xx on all {len(launch.pods)} pods")
            for line in cluster_views + group_views:
                print(line)
            unexpected = warnings(launch)
            if unexpected:
                fail("start-up warnings:\n  " + "\n  ".join(unexpected))
            print(f"no start-up warnings besides: {', '.join(ALLOWED_WARNINGS)}")
            print(f"all checks passed {elapsed:.1f}s after the first start")
            return
        fail("three starts in a row found ports taken")
    finally:
        if launch:
            launch.stop()


if __name__ == "__main__":
    main()
