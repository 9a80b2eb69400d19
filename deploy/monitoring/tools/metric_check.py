#!/usr/bin/env python3
"""Helpers of deploy/monitoring/check.sh, standard library only (plus PyYAML
for `compare`).

  metric_check.py register HOST:PORT [SECONDS]
      register a broker (topics MonitoringCheck and MonitoringCheckOther)
      and keep its connection open for SECONDS
  metric_check.py join-controller HOST:PORT
      join a broker replica to the controller at HOST:PORT (a broker set)
  metric_check.py request HOST:PORT CODE [KEY=VALUE...]
      send one request, print the response code
  metric_check.py wait URL REGEX SECONDS
      poll URL until a line matches REGEX
  metric_check.py scrape URL FILE
      save URL's text to FILE
  metric_check.py compare RULES DASHBOARD SCRAPE...

`compare` checks every metric name and label that RULES (a rules file) and
DASHBOARD (Grafana JSON) use against what the servers exported in the
SCRAPE files (GET /metrics): a name is exported when a sample carries it or
a `# TYPE` line declares its family (histograms: `_bucket`, `_sum`,
`_count`); a label used in a matcher, in by/without/on/ignoring/group_*
or in a legend must be on a sample of a metric the expression uses, and a
matcher's literal value must be one that a sample carries. It exits 1
naming each failure.
"""

import json
import re
import socket
import struct
import sys
import time
import urllib.request

# ---------------------------------------------------------------- remoting


def frame(code, ext_fields, body=b""):
    header = json.dumps(
        {"code": code, "flag": 0, "language": "JAVA", "opaque": 1, "serializeTypeCurrentRPC": "JSON",
         "version": 479, "extFields": ext_fields}
    ).encode()
    return struct.pack(">iI", 4 + len(header) + len(body), len(header)) + header + body


def read_frame(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise SystemExit("connection closed before the answer was whole")
            data += chunk
        return data

    (length,) = struct.unpack(">i", exactly(4))
    data = exactly(length)
    header_length = struct.unpack(">I", data[:4])[0] & 0xFFFFFF
    return json.loads(data[4 : 4 + header_length])


def register(address):
    host, port = address.rsplit(":", 1)
    now = int(time.time() * 1000)
    version = {"counter": 1, "stateVersion": 0, "timestamp": now}
    # Two topics: a registration of one topic from a broker not registered
    # yet is refused, as Java refuses it (taken for an incremental one).
    topics = {
        name: {"attributes": {}, "order": False, "perm": 6, "readQueueNums": 4, "topicFilterType": "SINGLE_TAG",
               "topicName": name, "topicSysFlag": 0, "writeQueueNums": 4}
        for name in ("MonitoringCheck", "MonitoringCheckOther")
    }
    body = json.dumps({
        "filterServerList": [],
        "topicConfigSerializeWrapper": {
            "dataVersion": version, "mappingDataVersion": version,
            "topicConfigTable": topics,
            "topicQueueMappingDetailMap": {}, "topicQueueMappingInfoMap": {},
        },
    }).encode()
    ext = {"brokerName": "monitoring-check-a", "brokerAddr": "127.0.0.1:10911", "clusterName": "MonitoringCheck",
           "haServerAddr": "127.0.0.1:10912", "brokerId": "0", "compressed": "false", "bodyCrc32": "0",
           "enableActingMaster": "false", "heartbeatTimeoutMillis": "120000"}
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(frame(103, ext, body))
        answer = read_frame(sock)
        # The broker's connection stays open until the check ends: closing
        # it would remove the broker (reason "close").
        if answer.get("code") != 0:
            raise SystemExit(f"REGISTER_BROKER answered {answer.get('code')}: {answer.get('remark')}")
        print(f"registered broker monitoring-check-a with {address}")
        sys.stdout.flush()
        time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)


def join_controller(address):
    """What a broker replica does first with its controller: takes a broker
    id (CONTROLLER_GET_NEXT_BROKER_ID, 1012), applies it
    (CONTROLLER_APPLY_BROKER_ID, 1013) and registers (CONTROLLER_REGISTER_BROKER,
    1003), so that the controller holds a broker set."""
    host, port = address.rsplit(":", 1)
    replica = "127.0.0.1:10911"
    names = {"clusterName": "MonitoringCheck", "brokerName": "monitoring-check-a"}
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        def call(code, fields):
            sock.sendall(frame(code, {**names, **fields}))
            answer = read_frame(sock)
            if answer.get("code") != 0:
                raise SystemExit(f"request {code} answered {answer.get('code')}: {answer.get('remark')}")
            return answer.get("extFields") or {}

        broker_id = call(1012, {})["nextBrokerId"]
        call(1013, {"appliedBrokerId": broker_id, "registerCheckCode": f"{replica};{int(time.time() * 1000)}"})
        call(1003, {"brokerId": broker_id, "brokerAddress": replica})
    print(f"replica {replica} joined the controller at {address} as broker id {broker_id}")


def request(address, code, fields):
    host, port = address.rsplit(":", 1)
    ext = dict(field.split("=", 1) for field in fields)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(frame(int(code), ext))
        answer = read_frame(sock)
    print(f"request {code} to {address}: response {answer.get('code')}")


# ---------------------------------------------------------------- HTTP


def fetch(url):
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read().decode()


def wait(url, pattern, seconds):
    deadline = time.monotonic() + float(seconds)
    regex = re.compile(pattern, re.M)
    last = "no answer yet"
    while time.monotonic() < deadline:
        try:
            text = fetch(url)
            if regex.search(text):
                return
            last = "no line matched"
        except OSError as error:
            last = str(error)
        time.sleep(0.2)
    raise SystemExit(f"{url}: nothing matched {pattern!r} within {seconds} s ({last})")


# ---------------------------------------------------------------- exposition

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Exported:
    def __init__(self):
        self.types = {}  # family -> type
        self.labels = {}  # sample name -> {label: set(values)}

    def read(self, text):
        for line in text.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(None, 3)
                self.types[name] = kind
            elif line and not line.startswith("#"):
                match = SAMPLE.match(line)
                if not match:
                    raise SystemExit(f"cannot read exposition line {line!r}")
                labels = self.labels.setdefault(match.group(1), {})
                for label, value in LABEL.findall(match.group(2) or ""):
                    labels.setdefault(label, set()).add(value)

    def names(self):
        names = set(self.labels)
        for family, kind in self.types.items():
            if kind == "histogram":
                names |= {family + "_bucket", family + "_sum", family + "_count"}
            elif kind == "summary":
                names |= {family, family + "_sum", family + "_count"}
            else:
                names.add(family)
        return names


# ---------------------------------------------------------------- PromQL

NAME = re.compile(r"\b((?:waymark|process)_[a-zA-Z0-9_]+)\b(\{[^}]*\})?")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
LEGEND = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
# Labels Prometheus attaches to every series it scrapes.
TARGET_LABELS = {"job", "instance"}
WORDS = re.compile(r"^[a-zA-Z0-9_]+(\|[a-zA-Z0-9_]+)*$")


def check_expression(where, expr, exported, names, failures, legend=""):
    used = []
    for name, selector in NAME.findall(expr):
        if name not in names:
            failures.append(f"{where}: {name} is not exported")
            continue
        used.append(name)
        for label, op, value in MATCHER.findall(selector or ""):
            if label in TARGET_LABELS:
                continue
            seen = exported.labels.get(name)
            if not seen:
                failures.append(f"{where}: {name}{{{label}…}}: no sample of {name} to check the label against")
                continue
            if label not in seen:
                failures.append(f"{where}: {name} has no label {label} (it has: {', '.join(sorted(seen)) or 'none'})")
                continue
            if "$" in value:
                continue
            if op in ("=", "!=") or (op in ("=~", "!~") and WORDS.match(value)):
                for one in value.split("|") if op in ("=~", "!~") else [value]:
                    if one not in seen[label]:
                        failures.append(
                            f"{where}: {name}{{{label}{op}\"{value}\"}}: no sample has {label}=\"{one}\" "
                            f"(seen: {', '.join(sorted(seen[label]))})"
                        )
    available = set(TARGET_LABELS) | {"le"}
    for name in used:
        available |= set(exported.labels.get(name, {}))
    grouped = [label.strip() for group in GROUPING.findall(expr) for label in group.split(",") if label.strip()]
    for label in grouped + LEGEND.findall(legend):
        if label not in available:
            failures.append(f"{where}: label {label} is on none of {', '.join(used) or 'no metric'}")
    return used


def rule_expressions(path):
    import yaml

    with open(path) as file:
        rules = yaml.safe_load(file)
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            yield f"{path}: {name} expr", rule["expr"], ""
            for key, text in (rule.get("annotations") or {}).items():
                # Annotations name metrics for the operator: they must exist too.
                yield f"{path}: {name} {key}", text, ""


def dashboard_expressions(path):
    with open(path) as file:
        dashboard = json.load(file)
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            yield f"{path}: variable {variable['name']}", query["query"], ""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield f"{path}: panel {panel['title']!r} {target['refId']}", target["expr"], target.get("legendFormat", "")


def compare(rules, dashboard, scrapes):
    exported = Exported()
    for scrape in scrapes:
        with open(scrape) as file:
            exported.read(file.read())
    names = exported.names()
    failures, used = [], set()
    for where, expr, legend in list(rule_expressions(rules)) + list(dashboard_expressions(dashboard)):
        used |= set(check_expression(where, expr, exported, names, failures, legend))
    families = sorted(exported.types)
    print(f"{len(used)} metric names used in the rules and the dashboard, checked against "
          f"{len(families)} families exported by {len(scrapes)} servers")
    unused = [f for f in families if not any(u == f or u.startswith(f + "_") for u in used)]
    if unused:
        print(f"exported, used by neither: {', '.join(unused)}")
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "register":
        register(argv[1])
    elif len(argv) == 2 and argv[0] == "join-controller":
        join_controller(argv[1])
    elif len(argv) >= 3 and argv[0] == "request":
        request(argv[1], argv[2], argv[3:])
    elif len(argv) == 4 and argv[0] == "wait":
        wait(argv[1], argv[2], argv[3])
    elif len(argv) == 3 and argv[0] == "scrape":
        with open(argv[2], "w") as file:
            file.write(fetch(argv[1]))
    elif len(argv) >= 4 and argv[0] == "compare":
        return compare(argv[1], argv[2], argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
