// Checks that the Grafana dashboard, the Prometheus alerts and the queries in docs/deployment.md use only metrics
// tokenmeter exports, with their labels, and that the dashboard's and the docs' queries parse as PromQL.
// Run by scripts/check-stack.sh from the repository root; needs node_modules (yaml, prom-client) and promtool.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const YAML = require('yaml');
const promClient = require('prom-client');

const DASHBOARD = 'config/grafana/dashboards/tokenmeter.json';
const DATASOURCES = 'config/grafana/provisioning/datasources/prometheus.yml';
const ALERTS = 'config/prometheus/alerts.yml';
const DOCS = 'docs/deployment.md';
const DS_REF = '${DS_PROMETHEUS}';

/**
 * The closed sets of label values the dashboard and alerts may filter on; every other label takes any value. The
 * metric and label names themselves are read from src/observability/metrics.ts below, so this script cannot drift from the code.
 */
const CLOSED_VALUES = {
  stream: ['true', 'false'],
  source: ['upstream', 'estimated'],
  op: ['reserve', 'settle', 'release', 'renew', 'lookup', 'ping', 'create_key', 'grant', 'get_key', 'list_keys', 'revoke', 'usage'],
};
const KIND_VALUES = {
  tokenmeter_tokens_total: ['prompt', 'completion'],
  tokenmeter_upstream_errors_total: ['connect', 'timeout', 'status', 'mid_stream'],
};

/** What src/observability/metrics.ts registers: metric -> { labels: {label -> values or null}, histogram }. */
function appMetrics() {
  require('tsx/cjs');
  const { Metrics } = require('../src/observability/metrics');
  const metrics = new Metrics({ perKey: true, processMetrics: false });
  const out = {};
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const labels = {};
    for (const l of metric.labelNames) labels[l] = l === 'kind' ? (KIND_VALUES[metric.name] ?? null) : (CLOSED_VALUES[l] ?? null);
    out[metric.name] = { labels, histogram: metric instanceof promClient.Histogram };
  }
  return out;
}

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];
const PROMQL_KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'inf',
  'nan',
]);

/** metric name -> allowed label names (label -> values or null). */
async function knownMetrics() {
  const known = new Map();
  const add = (name, labels) => known.set(name, { ...labels, ...Object.fromEntries(TARGET_LABELS.map((l) => [l, null])) });
  for (const [name, { labels, histogram }] of Object.entries(appMetrics())) {
    if (histogram) {
      add(`${name}_bucket`, { ...labels, le: null });
      add(`${name}_sum`, labels);
      add(`${name}_count`, labels);
    } else add(name, labels);
  }
  // Node's default process metrics, named by the installed prom-client with tokenmeter's prefix.
  const registry = new promClient.Registry();
  promClient.collectDefaultMetrics({ register: registry, prefix: 'tokenmeter_' });
  for (const m of await registry.getMetricsAsJSON()) {
    const labels = {};
    for (const v of m.values) for (const l of Object.keys(v.labels ?? {})) labels[l] = null;
    if (m.type === 'histogram') {
      add(`${m.name}_bucket`, { ...labels, le: null });
      add(`${m.name}_sum`, labels);
      add(`${m.name}_count`, labels);
    } else add(m.name, labels);
  }
  add('up', {});
  return known;
}

/** Grafana's variables, replaced so the expression is plain PromQL. */
function substituteVariables(expr) {
  return expr.replace(/\$\{?(\w+)\}?/g, (_m, name) => (name.startsWith('__') ? '5m' : '.*'));
}

/** The selectors of a PromQL expression: [{name, matchers: [{label, op, value}]}]. Names in function position are skipped. */
function selectors(expr) {
  const found = [];
  // Strings out of the way first, so nothing inside them looks like a name; remember them by index.
  const strings = [];
  let s = expr.replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`/g, (m) => `"${strings.push(m.slice(1, -1)) - 1}"`);
  s = s.replace(/\[[^\]]*\]/g, ' '); // ranges and subqueries
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const token = /(?<![\w.:])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?|(\{[^}]*\})/g;
  for (let m; (m = token.exec(s));) {
    const [, name, braces, call, bare] = m;
    if (call && !braces) continue; // a function
    if (name && PROMQL_KEYWORDS.has(name.toLowerCase()) && !braces) continue;
    const matchers = [];
    for (const mm of (braces ?? bare ?? '').matchAll(/([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"(\d+)"/g)) {
      matchers.push({ label: mm[1], op: mm[2], value: strings[Number(mm[3])] });
    }
    let metric = name;
    const nameMatcher = matchers.find((x) => x.label === '__name__' && x.op === '=');
    if (!metric && nameMatcher) metric = nameMatcher.value;
    found.push({ name: metric, matchers: matchers.filter((x) => x.label !== '__name__') });
  }
  return found;
}

/** Problems with one expression's metric names, label names and closed label values. */
function checkExpr(expr, where, known) {
  const problems = [];
  for (const sel of selectors(expr)) {
    if (!sel.name) {
      problems.push(`${where}: a selector without a metric name`);
      continue;
    }
    const labels = known.get(sel.name);
    if (!labels) {
      problems.push(`${where}: unknown metric ${sel.name}`);
      continue;
    }
    for (const { label, op, value } of sel.matchers) {
      if (!(label in labels)) problems.push(`${where}: ${sel.name} has no label ${label}`);
      else if (op === '=' && labels[label] && !labels[label].includes(value)) {
        problems.push(`${where}: ${sel.name}{${label}="${value}"} can never match (${labels[label].join('|')})`);
      }
    }
  }
  return problems;
}

function dashboardQueries(dashboard, problems) {
  const queries = [];
  const seenIds = new Set();
  const checkDatasource = (ds, where) => {
    if (!ds || ds.type !== 'prometheus' || ds.uid !== DS_REF) {
      problems.push(`${where}: datasource must be {"type": "prometheus", "uid": "${DS_REF}"}, is ${JSON.stringify(ds)}`);
    }
  };
  const visit = (panel) => {
    if (seenIds.has(panel.id)) problems.push(`dashboard: panel id ${panel.id} used twice`);
    seenIds.add(panel.id);
    if (panel.type === 'row') return (panel.panels ?? []).forEach(visit);
    const where = `dashboard panel "${panel.title}"`;
    checkDatasource(panel.datasource, where);
    if (!panel.targets?.length) problems.push(`${where}: no queries`);
    for (const t of panel.targets ?? []) {
      checkDatasource(t.datasource, `${where} (${t.refId})`);
      queries.push({ expr: t.expr, where: `${where} (${t.refId})` });
    }
  };
  (dashboard.panels ?? []).forEach(visit);
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const where = `dashboard variable $${v.name}`;
    checkDatasource(v.datasource, where);
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    const lv = /^label_values\((.+),\s*(\w+)\)$/.exec(q ?? '');
    if (!lv) problems.push(`${where}: expected label_values(<metric>, <label>), got ${q}`);
    else queries.push({ expr: `${lv[1]}`, where, label: lv[2] });
  }
  return queries;
}

async function main() {
  const problems = [];
  const known = await knownMetrics();

  let dashboard;
  try {
    dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8'));
  } catch (err) {
    console.error(`${DASHBOARD}: ${err.message}`);
    process.exit(1);
  }
  if (!dashboard.uid || !dashboard.title) problems.push('dashboard: uid and title are required');

  // The dashboard's datasource variable defaults to the datasource Grafana is provisioned with.
  const dsVar = (dashboard.templating?.list ?? []).find((v) => v.name === 'DS_PROMETHEUS');
  const provisioned = YAML.parse(fs.readFileSync(DATASOURCES, 'utf8')).datasources ?? [];
  if (!dsVar || dsVar.type !== 'datasource' || dsVar.query !== 'prometheus') {
    problems.push('dashboard: needs a datasource variable DS_PROMETHEUS of type prometheus');
  } else if (!provisioned.some((d) => d.uid === dsVar.current?.value)) {
    problems.push(`dashboard: DS_PROMETHEUS defaults to uid ${dsVar.current?.value}, which ${DATASOURCES} does not provision`);
  }

  const queries = dashboardQueries(dashboard, problems);
  for (const q of queries) {
    const expr = substituteVariables(q.expr);
    problems.push(...checkExpr(expr, q.where, known));
    if (q.label) {
      const sel = selectors(expr)[0];
      const labels = sel && known.get(sel.name);
      if (labels && !(q.label in labels)) problems.push(`${q.where}: ${sel.name} has no label ${q.label}`);
    }
  }

  // The ```promql examples in the deployment docs, one query per line.
  for (const [, block] of fs.readFileSync(DOCS, 'utf8').matchAll(/```promql\n([\s\S]*?)```/g)) {
    for (const line of block.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'))) {
      queries.push({ expr: line, where: `${DOCS} query ${line}` });
      problems.push(...checkExpr(line, `${DOCS} query ${line}`, known));
    }
  }

  const alertRules = (YAML.parse(fs.readFileSync(ALERTS, 'utf8')).groups ?? []).flatMap((g) => g.rules ?? []);
  for (const r of alertRules) problems.push(...checkExpr(r.expr, `alert ${r.alert ?? r.record}`, known));

  // PromQL syntax of every dashboard and docs query: promtool parses them as recording rules.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tokenmeter-dashboard-'));
  const rulesFile = path.join(tmp, 'dashboard-queries.yml');
  const rules = queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: substituteVariables(q.expr) }));
  fs.writeFileSync(rulesFile, YAML.stringify({ groups: [{ name: 'dashboard', rules }] }));
  try {
    execFileSync('promtool', ['check', 'rules', rulesFile], { stdio: 'pipe' });
  } catch (err) {
    // Name the panel or docs line rather than the generated rule.
    const out = `${String(err.stdout)}${String(err.stderr)}`.replace(/"dashboard:query_(\d+)"/g, (_m, i) => queries[Number(i)].where);
    problems.push(`promtool cannot parse a query:\n${out.trim()}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  for (const p of problems) console.error(p);
  console.log(`${queries.length} dashboard and docs queries and ${alertRules.length} alert rules checked: ${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
