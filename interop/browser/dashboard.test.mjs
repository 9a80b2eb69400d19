// The dashboard of a real rmq-namesrv in a real headless Chromium: it loads
// without errors, shows a broker that a real client (rmq-broker-sim)
// registers, filters topics by the search box, and drops the broker when the
// client leaves (SIGTERM: it unregisters), without a reload. Two clustered
// NameServers: one's dashboard shows the other as a live member and the
// broker registered with the other as relayed from it.
//
//   WAYMARK_NAMESRV_BIN=... WAYMARK_BROKER_SIM_BIN=... node --test
//
// WAYMARK_SCREENSHOT_DIR: where screenshots go (default: a temporary
// directory). CHROMIUM: the browser (default /usr/bin/chromium).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const NAMESRV = process.env.WAYMARK_NAMESRV_BIN;
const BROKER_SIM = process.env.WAYMARK_BROKER_SIM_BIN;
const BROWSER = process.env.CHROMIUM ?? "/usr/bin/chromium";
const BOOT_TIMEOUT_MS = 20_000;
// The page polls every 2 s; a change must show within a few polls.
const CHANGE_TIMEOUT_MS = 15_000;

const children = [];
function start(command, args) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr += chunk; });
  child.stderrText = () => stderr;
  return child;
}

// The addresses the NameServer prints once it listens: never guessed. With
// `gossip`, also the cluster's gossip address, printed last.
function bootAddresses(child, { gossip = false } = {}) {
  return new Promise((resolve, reject) => {
    const found = {};
    const timer = setTimeout(
      () => reject(new Error("rmq-namesrv printed no boot, HTTP (and gossip) lines; stderr:\n" + child.stderrText())),
      BOOT_TIMEOUT_MS);
    child.on("exit", (code) => reject(new Error("rmq-namesrv exited (" + code + "):\n" + child.stderrText())));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const boot = line.match(/The Name Server boot success\. .*address (\S+)/);
      if (boot) found.remoting = boot[1];
      const http = line.match(/^Waymark HTTP listening on (http:\/\/\S+)/);
      if (http) found.http = http[1];
      const cluster = line.match(/^Waymark cluster gossip on (\S+)/);
      if (cluster) found.gossip = cluster[1];
      if (found.remoting && found.http && (found.gossip || !gossip)) {
        clearTimeout(timer);
        resolve(found);
      }
    });
  });
}

function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on("exit", () => resolve());
  });
}

test("the dashboard follows a broker coming and going", async (t) => {
  assert.ok(NAMESRV, "set WAYMARK_NAMESRV_BIN to the rmq-namesrv binary");
  assert.ok(BROKER_SIM, "set WAYMARK_BROKER_SIM_BIN to the rmq-broker-sim binary");
  const dir = mkdtempSync(join(tmpdir(), "waymark-dashboard-"));
  const shots = process.env.WAYMARK_SCREENSHOT_DIR ?? dir;
  let browser;
  t.after(async () => {
    if (browser) await browser.close();
    for (const child of children) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const namesrv = start(NAMESRV, [
    "--listen", "127.0.0.1:0",
    "--set", "httpListenAddr=127.0.0.1:0",
    "--set", "kvConfigPath=" + join(dir, "kv.json"),
    "--set", "configStorePath=" + join(dir, "ns.properties"),
    "--set", "routeSnapshotPath=",
  ]);
  const { remoting, http } = await bootAddresses(namesrv);

  browser = await chromium.launch({ executablePath: BROWSER, headless: true, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = watchProblems(page);

  await page.goto(http + "/");
  await page.locator("#last-updated").filter({ hasNotText: "never" }).waitFor({ timeout: CHANGE_TIMEOUT_MS });
  assert.equal(await page.locator("#role").textContent(), "NameServer");
  assert.equal(await page.locator("#brokers tbody tr").count(), 0, "no broker yet");
  assert.ok(await page.locator("#controller").isHidden(), "no controller in this process");
  assert.ok(await page.locator("#ns-cluster").isHidden(), "no NameServer cluster without clusterGossipAddr");

  // A real client registers a broker with three topics.
  const sim = start(BROKER_SIM, [
    "-n", remoting, "--broker-name", "dash", "--topics", "3", "--topic-prefix", "DashTopic",
    "--no-system-topics", "--base-port", "30911", "--period", "2s",
  ]);
  const row = page.locator('#brokers tbody tr[data-broker-addr="127.0.0.1:30911"]');
  await row.waitFor({ timeout: CHANGE_TIMEOUT_MS });
  assert.match(await row.textContent(), /dash-0/);
  assert.match(await row.textContent(), /master/);
  await page.locator('#topics tbody tr[data-topic="DashTopic2"]').first().waitFor({ timeout: CHANGE_TIMEOUT_MS });
  assert.equal(await page.locator("#count-brokers").textContent(), "1");
  await page.screenshot({ path: join(shots, "dashboard.png"), fullPage: true });

  // The search box filters on the server.
  await page.locator("#topic-search").fill("topic1");
  await page.waitForFunction(() => {
    const topics = [...document.querySelectorAll("#topics tbody tr")].map((tr) => tr.dataset.topic);
    return topics.length > 0 && topics.every((topic) => topic === "DashTopic1");
  }, null, { timeout: CHANGE_TIMEOUT_MS });
  await page.locator("#topic-search").fill("");

  // The client leaves as a Java broker does on shutdown: UNREGISTER_BROKER.
  sim.kill("SIGTERM");
  await exited(sim);
  await row.waitFor({ state: "detached", timeout: CHANGE_TIMEOUT_MS });
  await page.locator("#brokers-empty").waitFor({ state: "visible", timeout: CHANGE_TIMEOUT_MS });
  assert.equal(await page.locator("#count-brokers").textContent(), "0");
  await page.screenshot({ path: join(shots, "dashboard-empty.png"), fullPage: true });

  assert.deepEqual(problems, [], "the page had no errors while the server ran");

  // The NameServer going away is shown, not hidden behind stale numbers.
  namesrv.kill("SIGKILL");
  await page.locator("#error-banner").waitFor({ state: "visible", timeout: CHANGE_TIMEOUT_MS });
  assert.match(await page.locator("#error-banner").textContent(), /does not answer/);
});

// Watches a page for console errors, page errors, failed requests and error
// answers.
function watchProblems(page) {
  const problems = [];
  page.on("console", (message) => { if (message.type() === "error") problems.push("console: " + message.text()); });
  page.on("pageerror", (error) => problems.push("page error: " + error.message));
  page.on("requestfailed", (request) => problems.push("request failed: " + request.url()));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push("HTTP " + response.status() + ": " + response.url());
  });
  return problems;
}

test("the cluster view shows the other member and a relayed broker", async (t) => {
  assert.ok(NAMESRV, "set WAYMARK_NAMESRV_BIN to the rmq-namesrv binary");
  assert.ok(BROKER_SIM, "set WAYMARK_BROKER_SIM_BIN to the rmq-broker-sim binary");
  const dir = mkdtempSync(join(tmpdir(), "waymark-cluster-"));
  const shots = process.env.WAYMARK_SCREENSHOT_DIR ?? dir;
  let browser;
  t.after(async () => {
    if (browser) await browser.close();
    for (const child of children) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const clustered = (name, extra) => start(NAMESRV, [
    "--listen", "127.0.0.1:0",
    "--set", "httpListenAddr=127.0.0.1:0",
    "--set", "kvConfigPath=" + join(dir, name + "-kv.json"),
    "--set", "configStorePath=" + join(dir, name + ".properties"),
    "--set", "routeSnapshotPath=",
    "--set", "clusterGossipAddr=127.0.0.1:0",
    "--set", "clusterId=dashboard",
    ...extra,
  ]);
  const first = await bootAddresses(clustered("first", []), { gossip: true });
  const second = await bootAddresses(
    clustered("second", ["--set", "clusterSeeds=" + first.gossip]), { gossip: true });

  // A broker registers with the first NameServer only.
  start(BROKER_SIM, [
    "-n", first.remoting, "--broker-name", "relay", "--topics", "2", "--topic-prefix", "RelayTopic",
    "--no-system-topics", "--base-port", "30921", "--period", "2s",
  ]);

  browser = await chromium.launch({ executablePath: BROWSER, headless: true, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = watchProblems(page);
  await page.goto(second.http + "/");
  await page.locator("#ns-cluster").waitFor({ state: "visible", timeout: CHANGE_TIMEOUT_MS });
  assert.match(await page.locator("#ns-cluster-node").textContent(),
    new RegExp("cluster dashboard, this node " + second.remoting.replace(/\./g, "\\.")));

  // The first NameServer, judged live by the failure detector.
  const member = page.locator(`#ns-members tbody tr[data-member="${first.remoting}"][data-liveness="live"]`);
  await member.waitFor({ timeout: CHANGE_TIMEOUT_MS });
  assert.match(await member.textContent(), new RegExp(first.gossip.replace(/\./g, "\\.")));

  // The broker, relayed from the first NameServer, and routed here too.
  const relayed = page.locator('#ns-brokers tbody tr[data-broker-addr="127.0.0.1:30921"]');
  await relayed.waitFor({ timeout: CHANGE_TIMEOUT_MS });
  assert.equal(await relayed.getAttribute("data-source"), "relayed");
  assert.match(await relayed.textContent(), new RegExp("relay-0.*relayed from " + first.remoting.replace(/\./g, "\\.")));
  await page.locator('#brokers tbody tr[data-broker-addr="127.0.0.1:30921"]').waitFor({ timeout: CHANGE_TIMEOUT_MS });
  await page.locator('#topics tbody tr[data-topic="RelayTopic1"]').first().waitFor({ timeout: CHANGE_TIMEOUT_MS });
  await page.screenshot({ path: join(shots, "dashboard-cluster.png"), fullPage: true });

  // On the first NameServer the same broker is direct.
  await page.goto(first.http + "/");
  const direct = page.locator('#ns-brokers tbody tr[data-broker-addr="127.0.0.1:30921"][data-source="direct"]');
  await direct.waitFor({ timeout: CHANGE_TIMEOUT_MS });
  assert.deepEqual(problems, [], "the page had no errors");
});
