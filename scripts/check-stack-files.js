// Checks what `docker-compose config` cannot: the files the stack mounts, and the Dockerfile's inputs and basics.
// Run by scripts/check-stack.sh from the repository root; needs node_modules (yaml).
'use strict';

const fs = require('node:fs');
const YAML = require('yaml');

const problems = [];

const compose = YAML.parse(fs.readFileSync('docker-compose.yml', 'utf8'));
for (const [name, service] of Object.entries(compose.services ?? {})) {
  for (const volume of service.volumes ?? []) {
    const source = String(typeof volume === 'object' ? volume.source : volume.split(':')[0]);
    if (source.startsWith('.') && !fs.existsSync(source))
      problems.push(`docker-compose.yml: ${name} mounts ${source}, which does not exist`);
  }
  const context = typeof service.build === 'object' ? service.build.context : service.build;
  if (context && !fs.existsSync(`${context}/Dockerfile`))
    problems.push(`docker-compose.yml: ${name} builds ${context}, which has no Dockerfile`);
}

// Every COPY from the build context must exist and pass the .dockerignore allow-list (`*`, then `!path` lines).
const dockerfile = fs.readFileSync('Dockerfile', 'utf8');
const ignore = fs
  .readFileSync('.dockerignore', 'utf8')
  .split('\n')
  .map((l) => l.trim());
if (!ignore.includes('*')) problems.push('.dockerignore: expected an allow-list starting with *');
const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
for (const line of dockerfile.split('\n').map((l) => l.trim())) {
  if (!line.startsWith('COPY ') || line.includes('--from=')) continue;
  const words = line
    .split(/\s+/)
    .slice(1)
    .filter((w) => !w.startsWith('--'));
  for (const source of words.slice(0, -1)) {
    if (!fs.existsSync(source)) problems.push(`Dockerfile: COPY ${source}: no such file`);
    else if (!allowed.includes(source.replace(/\/$/, ''))) problems.push(`Dockerfile: COPY ${source}: excluded by .dockerignore`);
  }
}
// The image runs `npm run build`: every script that build calls must be copied in before it.
const copied = dockerfile.split('\n').filter((l) => /^COPY\s/.test(l.trim()) && !l.includes('--from='));
const buildScripts = [...JSON.parse(fs.readFileSync('package.json', 'utf8')).scripts.build.matchAll(/node (scripts\/\S+\.js)/g)].map(
  (m) => m[1],
);
// scripts/build.js runs the others by name, from its own folder.
for (const script of [...buildScripts]) {
  for (const [, name] of fs.readFileSync(script, 'utf8').matchAll(/__dirname, '([\w-]+\.js)'/g)) buildScripts.push(`scripts/${name}`);
}
for (const script of buildScripts) {
  if (!copied.some((l) => l.split(/\s+/).includes(script))) problems.push(`Dockerfile: npm run build needs ${script}, which is not copied`);
}
// The console is built in the image's build stage; without its sources /console answers "not built".
if (!/^COPY web \S+$/m.test(dockerfile)) problems.push('Dockerfile: the console (web/) is not copied into the build stage');
if (!/^USER\s+(?!root\b|0\b)\S+/m.test(dockerfile)) problems.push('Dockerfile: no non-root USER');
const healthcheck = /^HEALTHCHECK\s.*?CMD (\[.*\])$/m.exec(dockerfile.replace(/\\\n\s*/g, ''));
if (!healthcheck) problems.push('Dockerfile: no HEALTHCHECK CMD [...]');
// The compose file repeats the image's probe (to set its own timings); the two must not drift apart.
const composeTest = compose.services?.tokenmeter?.healthcheck?.test;
if (healthcheck && composeTest) {
  let imageTest;
  try {
    imageTest = ['CMD', ...JSON.parse(healthcheck[1])];
  } catch {
    problems.push(`Dockerfile: HEALTHCHECK CMD is not a JSON array: ${healthcheck[1]}`);
  }
  if (imageTest && JSON.stringify(imageTest) !== JSON.stringify(composeTest)) {
    problems.push("docker-compose.yml: tokenmeter's healthcheck differs from the Dockerfile's HEALTHCHECK");
  }
}
if (!/^CMD \["node", "dist\/server\.js"\]$/m.test(dockerfile)) problems.push('Dockerfile: CMD is not ["node", "dist/server.js"]');
// The image runs node with the same flags as `npm start` (they size V8's heap; see docs/development.md, Node support).
const startFlags = (/^node ((?:--\S+ )*)dist\/server\.js$/.exec(JSON.parse(fs.readFileSync('package.json', 'utf8')).scripts.start) ??
  [])[1];
const imageFlags = (/^ENV NODE_OPTIONS=(.*)$/m.exec(dockerfile) ?? [])[1];
if (startFlags === undefined) problems.push('package.json: scripts.start is not `node [--flags] dist/server.js`');
else if ((imageFlags ?? '') !== startFlags.trim())
  problems.push(`Dockerfile: NODE_OPTIONS is not the start script's flags (${startFlags.trim()})`);

for (const p of problems) console.error(p);
process.exit(problems.length ? 1 : 0);
