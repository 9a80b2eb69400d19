// The dashboard: reads /api/v1 every 2 s and redraws. Plain DOM, no
// framework and nothing loaded from elsewhere, so that it works offline.
"use strict";

const REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

// RocketMQ's PermName bits: 4 read, 2 write, 1 inherit.
function permText(perm) {
  return (perm & 4 ? "R" : "-") + (perm & 2 ? "W" : "-") + (perm & 1 ? "X" : "-");
}

function ago(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s ago";
  return Math.floor(s / 3600) + " h ago";
}

function duration(seconds) {
  const d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600),
    m = Math.floor(seconds % 3600 / 60);
  return (d ? d + " d " : "") + (d || h ? h + " h " : "") + m + " min";
}

async function getJson(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) {
    const error = new Error(path + ": HTTP " + response.status);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

function showOverview(o) {
  $("role").textContent = o.role === "controller" ? "controller" : "NameServer";
  $("version").textContent = o.version + " (" + o.gitRevision + ")";
  $("uptime").textContent = duration(o.uptimeSeconds);
  $("count-clusters").textContent = o.clusters ?? "–";
  $("count-brokers").textContent = o.brokers ?? "–";
  $("count-topics").textContent = o.topics ?? "–";
  $("count-queues").textContent = o.queueEntries ?? "–";
}

function showBrokers(brokers) {
  const body = $("brokers").tBodies[0];
  const rows = brokers.map((b) => {
    const tr = document.createElement("tr");
    tr.dataset.brokerAddr = b.address;
    tr.append(
      cell(b.cluster),
      cell(b.brokerName ?? "?"),
      cell(b.brokerId ?? "?", "num"),
      cell(b.role, b.role === "master" ? "master" : ""),
      cell(b.address),
      // Older than half its timeout: a broker that stopped heartbeating.
      cell(ago(b.lastRegistrationAgoMillis) + (b.provisional ? " (restored)" : ""),
        b.lastRegistrationAgoMillis > b.timeoutMillis / 2 ? "stale" : ""),
      cell(b.dataVersion.counter + " @ " + new Date(b.dataVersion.timestamp).toISOString()),
      cell(b.topicCount, "num"),
      cell(b.version ?? "–"),
    );
    return tr;
  });
  body.replaceChildren(...rows);
  $("brokers-empty").hidden = rows.length > 0;
}

function showTopics(result) {
  const body = $("topics").tBodies[0];
  const rows = [];
  for (const t of result.topics) {
    t.queues.forEach((q, i) => {
      const tr = document.createElement("tr");
      tr.dataset.topic = t.name;
      if (i === 0) {
        tr.className = "topic-first";
        const name = cell("");
        const link = document.createElement("a");
        link.href = "#";
        link.textContent = t.name + (t.order ? " (order)" : "");
        link.addEventListener("click", (event) => {
          event.preventDefault();
          showRoute(t.name);
        });
        name.append(link);
        name.rowSpan = t.queues.length;
        tr.append(name);
      }
      tr.append(cell(q.brokerName), cell(q.readQueueNums, "num"), cell(q.writeQueueNums, "num"),
        cell(permText(q.perm) + " (" + q.perm + ")"));
      rows.push(tr);
    });
  }
  body.replaceChildren(...rows);
  $("topics-count").textContent = result.truncated
    ? "first " + result.topics.length + " of " + result.total
    : result.total + " topic" + (result.total === 1 ? "" : "s");
}

async function showRoute(topic) {
  const pre = $("topic-route");
  try {
    const route = await getJson("/api/v1/topics/" + encodeURIComponent(topic));
    pre.textContent = topic + "\n" + JSON.stringify(route, null, 2);
  } catch (error) {
    pre.textContent = topic + ": " + error.message;
  }
  pre.hidden = false;
}

function showController(view) {
  const section = $("controller");
  if (!view) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  $("controller-leader").textContent = "group " + view.group + ", leader " + (view.leader ?? "none") +
    (view.isLeader ? " (this node)" : "");
  const rows = view.brokerSets.map((set) => {
    const tr = document.createElement("tr");
    tr.dataset.brokerSet = set.brokerName;
    const replicas = set.replicas.map((r) => r.brokerId + " " + r.address + (r.alive ? "" : " (dead)")).join(", ");
    tr.append(
      cell(set.cluster), cell(set.brokerName),
      cell(set.masterBrokerId == null ? "none" : set.masterBrokerId + " " + (set.masterAddress ?? "")),
      cell(set.masterEpoch, "num"),
      cell("{" + set.syncStateSet.join(", ") + "} epoch " + set.syncStateSetEpoch),
      cell(replicas),
    );
    return tr;
  });
  $("broker-sets").tBodies[0].replaceChildren(...rows);
}

// The NameServer cluster as this node sees it (/api/v1/cluster): its
// members, and where each broker it holds came from.
function showCluster(view) {
  const section = $("ns-cluster");
  if (!view || !view.enabled) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  const node = view.node;
  const agreement = node.sinceAgreementMillis == null
    ? "not in agreement yet"
    : node.sinceAgreementMillis < REFRESH_MS ? "in agreement" : "last in agreement " + ago(node.sinceAgreementMillis);
  $("ns-cluster-node").textContent = "cluster " + node.clusterId + ", this node " + node.name +
    " (gossip " + node.gossipAddr + "), " + (node.ready ? "ready" : "bootstrapping") + ", " +
    node.directBrokers + " direct and " + node.relayedBrokers + " relayed brokers, " + agreement +
    (node.pullsInFlight ? ", " + node.pullsInFlight + " pulls under way" : "");
  const members = view.members.map((m) => {
    const tr = document.createElement("tr");
    tr.dataset.member = m.name;
    tr.dataset.liveness = m.liveness;
    tr.append(
      cell(m.name), cell(m.generation, "num"), cell(m.gossipAddr),
      cell(m.liveness, m.liveness === "dead" ? "dead" : m.liveness === "live" ? "live" : "stale"),
      cell(m.ready ? "yes" : "no"), cell(m.directBrokers, "num"),
      cell(m.behind, m.behind > 0 ? "num stale" : "num"),
    );
    return tr;
  });
  $("ns-members").tBodies[0].replaceChildren(...members);
  $("ns-members-empty").hidden = members.length > 0;
  const brokers = view.brokers.map((b) => {
    const tr = document.createElement("tr");
    tr.dataset.brokerAddr = b.address;
    tr.dataset.source = b.source;
    const source = b.source === "relayed" ? "relayed from " + b.relayedFrom
      : b.source === "restored" ? "restored from the route snapshot" : b.source;
    tr.append(cell(b.cluster), cell(b.brokerName ?? "?"), cell(b.brokerId ?? "?", "num"),
      cell(b.address), cell(source));
    return tr;
  });
  $("ns-brokers").tBodies[0].replaceChildren(...brokers);
}

async function refresh() {
  const search = $("topic-search").value.trim();
  const topicsPath = "/api/v1/topics?limit=500" + (search ? "&search=" + encodeURIComponent(search) : "");
  try {
    const overview = await getJson("/api/v1/overview");
    showOverview(overview);
    if (overview.role !== "controller") {
      const [brokers, topics] = await Promise.all([getJson("/api/v1/brokers"), getJson(topicsPath)]);
      showBrokers(brokers.brokers);
      showTopics(topics);
    } else {
      $("brokers-section").hidden = true;
      $("topics-section").hidden = true;
    }
    showCluster(overview.cluster ? await getJson("/api/v1/cluster") : null);
    showController(overview.controller ? await getJson("/api/v1/controller") : null);
    $("error-banner").hidden = true;
    $("last-updated").textContent = new Date().toLocaleTimeString();
  } catch (error) {
    const banner = $("error-banner");
    banner.textContent = "The server does not answer (" + error.message + "); showing what it last said.";
    banner.hidden = false;
  }
}

let searchTimer;
$("topic-search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(refresh, 200);
});
refresh();
setInterval(refresh, REFRESH_MS);
