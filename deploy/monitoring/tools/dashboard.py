"""The Grafana dashboard over Waymark's metrics (docs/metrics.md), as data.

generate.py writes it to grafana/waymark.json. Every query selects
job=~"$job", instance=~"$instance"; the data source is the variable
$datasource, so the file imports into any Grafana 10 or later with a
Prometheus data source.
"""

SEL = 'job=~"$job", instance=~"$instance"'
DS = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"


class Layout:
    """Hands out panel ids and grid positions, row by row."""

    def __init__(self):
        self.panels = []
        self.next_id = 1
        self.x = 0
        self.y = 0
        self.row_height = 0

    def row(self, title):
        self._newline()
        self.panels.append(
            {
                "type": "row",
                "id": self._id(),
                "title": title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
                "panels": [],
            }
        )
        self.y += 1

    def add(self, panel, w, h):
        if self.x + w > 24:
            self._newline()
        panel["id"] = self._id()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.panels.append(panel)
        self.x += w
        self.row_height = max(self.row_height, h)

    def _newline(self):
        self.y += self.row_height
        self.x = 0
        self.row_height = 0

    def _id(self):
        self.next_id += 1
        return self.next_id - 1


def target(expr, legend, ref):
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def targets(queries):
    return [target(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(queries)]


def timeseries(title, description, queries, unit="short", stack=False, minimum=None):
    defaults = {
        "unit": unit,
        "custom": {
            "drawStyle": "line",
            "lineWidth": 1,
            "fillOpacity": 10 if not stack else 40,
            "showPoints": "never",
            "stacking": {"mode": "normal" if stack else "none", "group": "A"},
        },
    }
    if minimum is not None:
        defaults["min"] = minimum
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": targets(queries),
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
    }


def stat(title, description, expr, unit="short", thresholds=None):
    steps = thresholds or [{"color": "green", "value": None}]
    return {
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": targets([(expr, "")]),
        "fieldConfig": {
            "defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
            "overrides": [],
        },
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "value",
            "graphMode": "area",
            "justifyMode": "auto",
            "textMode": "auto",
            "orientation": "auto",
        },
    }


def variable_query(name, label, query, datasource=True):
    return {
        "type": "query",
        "name": name,
        "label": label,
        "datasource": DS if datasource else None,
        "definition": query,
        "query": {"query": query, "refId": f"{name}-variable"},
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "options": [],
    }


def quantile(q, request_matcher, by):
    return (
        f"histogram_quantile({q}, sum by ({by}, le) "
        f"(rate(waymark_request_duration_seconds_bucket{{{SEL}, {request_matcher}}}[{RATE}])))"
    )


def panels():
    p = Layout()
    red = [{"color": "green", "value": None}, {"color": "red", "value": 1}]

    p.row("Overview")
    p.add(stat("NameServers up", "NameServer targets answering scrapes, of those selected.",
               f'sum(up{{{SEL}}} and on (job, instance) waymark_build_info{{role="namesrv"}})'), 4, 4)
    p.add(stat("Brokers", "Registered brokers (cluster and address), the largest of the selected NameServers.",
               f"max(waymark_brokers{{{SEL}}})"), 4, 4)
    p.add(stat("Broker groups", "Broker names.", f"max(waymark_broker_groups{{{SEL}}})"), 4, 4)
    p.add(stat("Topics", "Topics.", f"max(waymark_topics{{{SEL}}})"), 4, 4)
    p.add(stat("Refusals (1h)", "Everything a budget or limit refused in the last hour, all kinds.",
               f"sum(increase(waymark_refusals_total{{{SEL}}}[1h]))", thresholds=red), 4, 4)
    p.add(stat("Expiry removals (1h)", "Brokers removed for going silent past their timeout in the last hour: a hung broker host.",
               f'sum(increase(waymark_broker_removals_total{{{SEL}, reason="expiry"}}[1h]))', thresholds=red), 4, 4)

    p.row("Routes")
    p.add(timeseries("Brokers and clusters", "The route tables' sizes per NameServer.", [
        (f"waymark_brokers{{{SEL}}}", "brokers {{instance}}"),
        (f"waymark_broker_groups{{{SEL}}}", "broker groups {{instance}}"),
        (f"waymark_clusters{{{SEL}}}", "clusters {{instance}}"),
    ], minimum=0), 8, 8)
    p.add(timeseries("Topics and queue entries", "Topics, and topic-queue entries (one per topic and broker name).", [
        (f"waymark_topics{{{SEL}}}", "topics {{instance}}"),
        (f"waymark_topic_queue_entries{{{SEL}}}", "queue entries {{instance}}"),
    ], minimum=0), 8, 8)
    p.add(timeseries("KV store", "KV namespaces and entries.", [
        (f"waymark_kv_namespaces{{{SEL}}}", "namespaces {{instance}}"),
        (f"waymark_kv_entries{{{SEL}}}", "entries {{instance}}"),
    ], minimum=0), 8, 8)

    p.row("Registrations and removals")
    p.add(timeseries("Registrations by response", "REGISTER_BROKER requests answered per second, by response code.", [
        (f'sum by (response) (rate(waymark_requests_total{{{SEL}, request="REGISTER_BROKER"}}[{RATE}]))', "{{response}}"),
    ], unit="reqps", stack=True), 8, 8)
    p.add(timeseries("Registration body size", "p50 and p99 of REGISTER_BROKER bodies (the broker's topics).", [
        (f"histogram_quantile(0.5, sum by (le) (rate(waymark_registration_body_bytes_bucket{{{SEL}}}[{RATE}])))", "p50"),
        (f"histogram_quantile(0.99, sum by (le) (rate(waymark_registration_body_bytes_bucket{{{SEL}}}[{RATE}])))", "p99"),
    ], unit="bytes"), 8, 8)
    p.add(timeseries("Broker removals by reason",
                     "Brokers removed from the route tables in each 5 minutes: close (connection closed), expiry "
                     "(silent past its timeout), unregister, cluster (relayed, no member vouches for it).", [
        (f"sum by (reason) (increase(waymark_broker_removals_total{{{SEL}}}[5m]))", "{{reason}}"),
    ], stack=True, minimum=0), 8, 8)

    p.row("Requests")
    p.add(timeseries("Requests by code", "Requests answered per second, by request code.", [
        (f"sum by (request) (rate(waymark_requests_total{{{SEL}}}[{RATE}]))", "{{request}}"),
    ], unit="reqps"), 8, 8)
    p.add(timeseries("Responses other than SUCCESS", "Requests per second whose answer was not SUCCESS, by request and response.", [
        (f'sum by (request, response) (rate(waymark_requests_total{{{SEL}, response!="SUCCESS"}}[{RATE}]))',
         "{{request}} {{response}}"),
    ], unit="reqps"), 8, 8)
    p.add(timeseries("Route query latency", "GET_ROUTEINFO_BY_TOPIC, from the request read to its answer queued, per NameServer.", [
        (quantile(0.5, 'request="GET_ROUTEINFO_BY_TOPIC"', "instance"), "p50 {{instance}}"),
        (quantile(0.99, 'request="GET_ROUTEINFO_BY_TOPIC"', "instance"), "p99 {{instance}}"),
    ], unit="s"), 8, 8)
    p.add(timeseries("p99 latency by request code", "The 99th percentile per request code, all selected servers.", [
        (quantile(0.99, 'request=~".+"', "request"), "{{request}}"),
    ], unit="s"), 12, 8)
    p.add(timeseries("p50 latency by request code", "The median per request code, all selected servers.", [
        (quantile(0.5, 'request=~".+"', "request"), "{{request}}"),
    ], unit="s"), 12, 8)

    p.row("Connections and refusals")
    p.add(timeseries("Connections", "Remoting connections open, and accepted per second.", [
        (f"waymark_connections_open{{{SEL}}}", "open {{instance}}"),
        (f"rate(waymark_connections_opened_total{{{SEL}}}[{RATE}])", "opened/s {{instance}}"),
    ]), 8, 8)
    p.add(timeseries("Remoting traffic", "Bytes per second read from and written to remoting connections.", [
        (f"rate(waymark_received_bytes_total{{{SEL}}}[{RATE}])", "received {{instance}}"),
        (f"rate(waymark_sent_bytes_total{{{SEL}}}[{RATE}])", "sent {{instance}}"),
    ], unit="Bps"), 8, 8)
    p.add(timeseries("Refusals by kind", "What each budget or limit refused per second (docs/metrics.md lists the kinds).", [
        (f"sum by (kind) (rate(waymark_refusals_total{{{SEL}}}[{RATE}])) > 0", "{{kind}}"),
    ], unit="ops"), 8, 8)

    p.row("Process")
    p.add(timeseries("Resident memory", "Resident set size per process.", [
        (f"process_resident_memory_bytes{{{SEL}}} and on (job, instance) waymark_build_info", "{{instance}}"),
    ], unit="bytes", minimum=0), 6, 8)
    p.add(timeseries("CPU", "CPU time per second (1 = one core busy).", [
        (f"rate(process_cpu_seconds_total{{{SEL}}}[{RATE}]) and on (job, instance) waymark_build_info", "{{instance}}"),
    ], unit="short", minimum=0), 6, 8)
    p.add(timeseries("File descriptors", "Open descriptors against the soft limit.", [
        (f"process_open_fds{{{SEL}}} and on (job, instance) waymark_build_info", "open {{instance}}"),
        (f"process_max_fds{{{SEL}}} and on (job, instance) waymark_build_info", "limit {{instance}}"),
    ], minimum=0), 6, 8)
    p.add({
        "type": "table",
        "title": "Builds",
        "description": "Version, git revision and role of every selected process, and its uptime.",
        "datasource": DS,
        "targets": [dict(target(f"time() - (process_start_time_seconds{{{SEL}}} and on (job, instance) waymark_build_info)", "", "A"),
                         instant=True, range=False, format="table"),
                    dict(target(f"waymark_build_info{{{SEL}}}", "", "B"), instant=True, range=False, format="table")],
        "transformations": [
            {"id": "merge", "options": {}},
            {"id": "organize", "options": {
                "excludeByName": {"Time": True, "Value #B": True, "__name__": True},
                "renameByName": {"Value #A": "uptime"},
            }},
        ],
        "fieldConfig": {"defaults": {"unit": "s"}, "overrides": []},
        "options": {"showHeader": True},
    }, 6, 8)

    p.row("NameServer cluster")
    p.add(timeseries("Ready", "1 once the node serves routes (after its bootstrap).", [
        (f"waymark_cluster_ready{{{SEL}}}", "{{instance}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Members by state", "Other members each node knows: live, unknown (not judged yet), dead (a restarted node's earlier incarnation stays dead for an hour).", [
        (f"waymark_cluster_members{{{SEL}}}", "{{state}} {{instance}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Since agreement", "Seconds since each node last held every up member's brokers as they publish them (-1: not yet since start).", [
        (f"waymark_cluster_since_agreement_seconds{{{SEL}}}", "{{instance}}"),
    ], unit="s"), 6, 8)
    p.add(timeseries("Behind, per peer", "Brokers a peer publishes that this node does not hold as it should yet.", [
        (f"waymark_cluster_digests_behind{{{SEL}}}", "{{instance}} behind {{peer}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Brokers direct and relayed", "Brokers each node holds: registered with it directly, or relayed from the member that holds them.", [
        (f"waymark_cluster_brokers{{{SEL}}}", "{{source}} {{instance}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Pulls", "Pulls of registrations from peers per second, by result, and relayed registrations applied.", [
        (f"sum by (instance, result) (rate(waymark_cluster_pulls_total{{{SEL}}}[{RATE}]))", "{{result}} {{instance}}"),
        (f"rate(waymark_cluster_relayed_applied_total{{{SEL}}}[{RATE}])", "applied {{instance}}"),
    ], unit="ops"), 6, 8)
    p.add(timeseries("Mean pull time", "Time a pull took on average, from connecting to the answer or the failure.", [
        (f"rate(waymark_cluster_pull_seconds_total{{{SEL}}}[{RATE}]) / "
         f"sum without (result) (rate(waymark_cluster_pulls_total{{{SEL}}}[{RATE}]))", "{{instance}}"),
    ], unit="s"), 6, 8)
    p.add(timeseries("Gossip and refused peer input", "Gossip bytes per second, and peer input refused by kind.", [
        (f"rate(waymark_cluster_gossip_bytes_total{{{SEL}}}[{RATE}])", "{{direction}} B/s {{instance}}"),
        (f"sum by (instance, kind) (rate(waymark_cluster_refusals_total{{{SEL}}}[{RATE}])) > 0", "refused {{kind}} {{instance}}"),
    ]), 6, 8)

    p.row("Controller")
    p.add(timeseries("Leader", "1 on the serving leader.", [
        (f"waymark_controller_is_leader{{{SEL}}}", "{{instance}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Leader changes and term", "Leader changes each node saw in each 15 minutes, and the Raft term.", [
        (f"increase(waymark_controller_leader_changes_total{{{SEL}}}[15m])", "changes {{instance}}"),
        (f"waymark_controller_raft_term{{{SEL}}}", "term {{instance}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Raft log", "Last log index and last applied index per node; a follower's applied index against the leader's shows how far it lags.", [
        (f"waymark_controller_raft_last_log_index{{{SEL}}}", "log {{instance}}"),
        (f"waymark_controller_raft_applied_index{{{SEL}}}", "applied {{instance}}"),
    ]), 6, 8)
    p.add(timeseries("Apply lag", "Entries logged but not yet applied, and how far each node's applied index is behind the furthest node's.", [
        (f"waymark_controller_raft_apply_lag{{{SEL}}}", "unapplied {{instance}}"),
        (f"max by (job) (waymark_controller_raft_applied_index{{{SEL}}}) - on (job) group_right () "
         f"waymark_controller_raft_applied_index{{{SEL}}}", "behind {{instance}}"),
    ], minimum=0), 6, 8)
    p.add(timeseries("Broker sets", "Broker sets known, replicas heartbeating each node in time, and elections.", [
        (f"waymark_controller_broker_sets{{{SEL}}}", "sets {{instance}}"),
        (f"waymark_controller_replicas_alive{{{SEL}}}", "replicas alive {{instance}}"),
        (f"increase(waymark_controller_elections_total{{{SEL}}}[15m])", "elections (15m) {{instance}}"),
    ], minimum=0), 8, 8)
    p.add(timeseries("Master epochs", "Each broker set's master epoch, on the serving leader.", [
        (f"waymark_controller_master_epoch{{{SEL}}} and on (job, instance) waymark_controller_is_leader == 1",
         "{{cluster}}/{{broker_name}}"),
    ]), 8, 8)
    p.add(timeseries("Sync-state sets and masters", "Replicas in each broker set's sync-state set, and its master's broker id (-1: none), on the serving leader.", [
        (f"waymark_controller_sync_state_set_size{{{SEL}}} and on (job, instance) waymark_controller_is_leader == 1",
         "in sync {{cluster}}/{{broker_name}}"),
        (f"waymark_controller_master_broker_id{{{SEL}}} and on (job, instance) waymark_controller_is_leader == 1",
         "master id {{cluster}}/{{broker_name}}"),
    ]), 8, 8)
    return p.panels


def build():
    return {
        "uid": "waymark-overview",
        "title": "Waymark",
        "description": "NameServers and controllers of Waymark: routes, registrations, requests, refusals, the NameServer cluster, the controller's Raft (docs/metrics.md).",
        "tags": ["waymark", "rocketmq"],
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "browser",
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "links": [],
        "annotations": {"list": [{
            "builtIn": 1,
            "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True,
            "hide": True,
            "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts",
            "type": "dashboard",
        }]},
        "templating": {"list": [
            {
                "type": "datasource",
                "name": "datasource",
                "label": "Data source",
                "query": "prometheus",
                "refresh": 1,
                "current": {},
                "options": [],
                "hide": 0,
            },
            variable_query("job", "Job", "label_values(waymark_build_info, job)"),
            variable_query("instance", "Instance", 'label_values(waymark_build_info{job=~"$job"}, instance)'),
        ]},
        "panels": panels(),
    }
