/**
 * The deployment files (Dockerfile, docker-compose.yml, deploy/) against the code they deploy: ports and
 * defaults from SettingsSchema, environment variables from OPTIONS, probe paths served by HttpServer,
 * the entry point from package.json, and the references between the manifests.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { HttpServer } from '../../../src/observability/http-server.js';
import { loadSettings, OPTIONS, SettingsError, SettingsSchema } from '../../../src/settings.js';

const ROOT = join(import.meta.dirname, '../../..');
const K8S_DIR = 'deploy/kubernetes';
const DEFAULTS = SettingsSchema.parse({});
const METRICS_PORT = DEFAULTS.metricsPort;
const SETTINGS_ENV = new Set(OPTIONS.flatMap((option) => (option.env ? [option.env] : [])));

type Obj = Record<string, unknown>;

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const yamlFile = (path: string): Obj => parseYaml(read(path)) as Obj;
const obj = (value: unknown, what: string): Obj => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not a mapping`);
  return value as Obj;
};
const list = (value: unknown, what: string): unknown[] => {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
};

/** Every document of every YAML manifest in deploy/kubernetes, with its file. */
function kubernetesDocuments(): { file: string; doc: Obj }[] {
  const out: { file: string; doc: Obj }[] = [];
  for (const file of readdirSync(join(ROOT, K8S_DIR)).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    for (const document of parseAllDocuments(read(`${K8S_DIR}/${file}`))) {
      expect(document.errors, `${file}: YAML errors`).toEqual([]);
      const doc = document.toJSON() as unknown;
      if (doc !== null && doc !== undefined) out.push({ file, doc: obj(doc, file) });
    }
  }
  return out;
}

function manifest(kind: string): Obj {
  const found = kubernetesDocuments().filter(({ doc }) => doc.kind === kind);
  expect(found.map((f) => f.file), `one ${kind} manifest`).toHaveLength(1);
  return found[0]!.doc;
}

/** A compose service's environment as a map (both the mapping and the `KEY=value` list forms). */
function composeEnvironment(service: Obj): Record<string, string> {
  const env = service.environment;
  if (env === undefined) return {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const [key, ...rest] = String(entry).split('=');
        return [key!, rest.join('=')];
      }),
    );
  }
  return Object.fromEntries(Object.entries(obj(env, 'environment')).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** Names that are not options the service reads (src/settings.ts OPTIONS). */
function unknownSettingNames(names: Iterable<string>): string[] {
  return [...names].filter((name) => !SETTINGS_ENV.has(name));
}

/** `host:port` of a URL-ish string such as pulsar://pulsar:6650 or ws://pulsar:8080. */
function hostPort(url: string): { host: string; port: number } {
  const parsed = new URL(url.replace(/^pulsar(\+ssl)?:/, 'http:'));
  return { host: parsed.hostname, port: Number(parsed.port) };
}

/** The instructions of a Dockerfile, continuation lines joined, comments dropped, with their stage. */
function dockerfileInstructions(text: string): { stage: string; keyword: string; args: string }[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const out: { stage: string; keyword: string; args: string }[] = [];
  let stage = '';
  for (const line of joined.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const match = /^(\w+)\s+(.*)$/.exec(trimmed);
    if (!match) continue;
    const keyword = match[1]!.toUpperCase();
    if (keyword === 'FROM') stage = /\bAS\s+(\S+)/i.exec(match[2]!)?.[1] ?? match[2]!;
    out.push({ stage, keyword, args: match[2]!.trim() });
  }
  return out;
}

/** Host paths (relative to the repository) of a compose service's bind mounts. */
function bindMountSources(service: Obj): { source: string; target: string }[] {
  const volumes = service.volumes === undefined ? [] : list(service.volumes, 'volumes');
  return volumes.flatMap((volume) => {
    if (typeof volume === 'string') {
      const [source, target] = volume.split(':');
      return source && /^[./]/.test(source) ? [{ source, target: target ?? '' }] : [];
    }
    const long = obj(volume, 'volume');
    return long.type === 'bind' ? [{ source: String(long.source), target: String(long.target) }] : [];
  });
}

/** A healthcheck `test` (list or string) as one string. */
function healthcheckCommand(service: Obj): string {
  const test = obj(service.healthcheck, 'healthcheck').test;
  return Array.isArray(test) ? test.join(' ') : String(test);
}

const compose = yamlFile('docker-compose.yml');
const services = obj(compose.services, 'services');
const agent = obj(services.agent, 'services.agent');
const dockerfile = dockerfileInstructions(read('Dockerfile'));
const packageJson = JSON.parse(read('package.json')) as { main: string };

function deploymentContainer(): Obj {
  const deployment = manifest('Deployment');
  const podSpec = obj(obj(obj(deployment.spec, 'spec').template, 'template').spec, 'pod spec');
  const containers = list(podSpec.containers, 'containers');
  expect(containers).toHaveLength(1);
  return obj(containers[0], 'container');
}

function containerPort(container: Obj, name: string): number {
  const port = list(container.ports, 'ports')
    .map((p) => obj(p, 'port'))
    .find((p) => p.name === name);
  expect(port, `container port named ${name}`).toBeDefined();
  return Number(port!.containerPort);
}

// ---------------------------------------------------------------------------------------------------------

describe('Dockerfile', () => {
  it('starts the file package.json names as main, which the build produces from src/main.ts', () => {
    const entrypoint = dockerfile.filter((i) => i.keyword === 'ENTRYPOINT').at(-1);
    expect(entrypoint).toBeDefined();
    const command = JSON.parse(entrypoint!.args) as string[];
    expect(command[0]).toBe('node');
    expect(command[1]).toBe(packageJson.main);

    const tsconfig = JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string; rootDir: string } };
    const built = posix.join(tsconfig.compilerOptions.outDir, posix.relative(tsconfig.compilerOptions.rootDir, 'src/main.ts'));
    expect(built.replace(/\.ts$/, '.js')).toBe(packageJson.main);
    expect(existsSync(join(ROOT, 'src/main.ts'))).toBe(true);
    // The runtime stage copies the build output that holds the entry point.
    const runtimeCopies = dockerfile.filter((i) => i.stage === 'runtime' && i.keyword === 'COPY').map((i) => i.args);
    expect(runtimeCopies.some((args) => args.includes('--from=build') && args.includes(`/app/${packageJson.main.split('/')[0]}`))).toBe(true);
  });

  it('runs as the non-root user the Kubernetes securityContext expects, from Node 20 slim stages', () => {
    const stages = dockerfile.filter((i) => i.keyword === 'FROM');
    expect(stages.map((s) => s.stage)).toEqual(['build', 'runtime']);
    const nodeImage = dockerfile.find((i) => i.keyword === 'ARG' && i.args.startsWith('NODE_IMAGE='))?.args;
    expect(nodeImage).toBe('NODE_IMAGE=node:20-bookworm-slim');
    const user = dockerfile.filter((i) => i.stage === 'runtime' && i.keyword === 'USER').at(-1)?.args;
    const securityContext = obj(deploymentContainer().securityContext, 'securityContext');
    expect(user?.split(':')[0]).toBe(String(securityContext.runAsUser));
    expect(securityContext.runAsUser).not.toBe(0);
  });

  it('exposes the default metrics port and health-checks /healthz on it', () => {
    const exposed = dockerfile.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
    expect(exposed).toContain(String(METRICS_PORT));
    const healthcheck = dockerfile.find((i) => i.keyword === 'HEALTHCHECK');
    expect(healthcheck).toBeDefined();
    const command = JSON.parse(healthcheck!.args.slice(healthcheck!.args.indexOf('CMD') + 3).trim()) as string[];
    expect(command[0]).toBe('node');
    const script = command.join(' ');
    expect(script).toContain("'/healthz'");
    expect(script).toMatch(/http:\/\/127\.0\.0\.1:/);
    expect(SETTINGS_ENV).toContain('TG_AGENT_METRICS_PORT');
    expect(/TG_AGENT_METRICS_PORT\s*\|\|\s*(\d+)/.exec(script)?.[1]).toBe(String(METRICS_PORT));
  });

  it('copies everything the build compiles, and .dockerignore keeps none of it out', () => {
    const buildCopies = dockerfile
      .filter((i) => i.stage === 'build' && i.keyword === 'COPY' && !i.args.includes('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((pattern) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`));
    for (const source of buildCopies) {
      expect(existsSync(join(ROOT, source)), `${source} exists`).toBe(true);
      expect(ignored.filter((pattern) => pattern.test(source)), `${source} is not in .dockerignore`).toEqual([]);
    }
    const buildConfig = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    for (const included of buildConfig.include) expect(buildCopies, `tsconfig.build.json includes ${included}`).toContain(included);
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) expect(buildCopies).toContain(needed);
  });

  it('reports at build time whether the optional native pulsar-client loaded, without failing', () => {
    // The build stage tries it to decide on the source build; the runtime stage reports what the image has.
    const check = dockerfile.filter((i) => i.stage === 'runtime' && i.keyword === 'RUN' && i.args.includes("require('pulsar-client')"));
    expect(check).toHaveLength(1);
    expect(check[0]!.args).toMatch(/try\s*\{/);
    expect(check[0]!.args).toMatch(/catch\s*\(/);
  });
});

describe('docker-compose.yml', () => {
  it('builds the agent from this directory into the image the Kubernetes Deployment runs', () => {
    const build = agent.build;
    const context = typeof build === 'string' ? build : obj(build, 'build').context;
    expect(context).toBe('.');
    expect(existsSync(join(ROOT, String(context), 'Dockerfile'))).toBe(true);
    expect(agent.image).toBe('tg-agent:latest');
    expect(deploymentContainer().image).toBe(agent.image);
  });

  it('publishes the default metrics port and health-checks /healthz on it', () => {
    const ports = list(agent.ports, 'ports').map(String);
    expect(ports).toContain(`${METRICS_PORT}:${METRICS_PORT}`);
    const url = /https?:\/\/[^\s'"]+/.exec(healthcheckCommand(agent))?.[0];
    expect(url).toBeDefined();
    expect(new URL(url!).port).toBe(String(METRICS_PORT));
    expect(new URL(url!).pathname).toBe('/healthz');
  });

  it('gives the agent only environment variables src/settings.ts reads, with valid values', () => {
    const env = composeEnvironment(agent);
    expect(Object.keys(env).length).toBeGreaterThan(0);
    expect(unknownSettingNames(Object.keys(env))).toEqual([]);
    expect(() => loadSettings([], env)).not.toThrow();
  });

  it('points the agent at the pulsar service, after it is healthy, with the WebSocket service on', () => {
    const env = composeEnvironment(agent);
    const pulsar = obj(services.pulsar, 'services.pulsar');
    const pulsarPorts = list(pulsar.ports, 'pulsar ports').map((p) => Number(String(p).split(':').at(-1)));
    for (const url of [env.PULSAR_HOST!, env.PULSAR_WS_URL!]) {
      const { host, port } = hostPort(url);
      expect(host).toBe('pulsar');
      expect(pulsarPorts).toContain(port);
    }
    expect(obj(obj(agent.depends_on, 'depends_on').pulsar, 'depends_on.pulsar').condition).toBe('service_healthy');
    expect(pulsar.image).toBe('apachepulsar/pulsar:4.0.7');
    expect(composeEnvironment(pulsar).PULSAR_PREFIX_webSocketServiceEnabled).toBe('true');
    // The image does not apply PULSAR_PREFIX_* by itself: the command must run the script first.
    const command = list(pulsar.command, 'pulsar command').map(String).join(' ');
    expect(command).toMatch(/apply-config-from-env\.py conf\/standalone\.conf && (exec )?bin\/pulsar standalone/);
    expect(healthcheckCommand(pulsar)).toContain('/admin/v2/namespaces/public/default');
  });

  it('mounts only files and directories that exist in the repository', () => {
    const mounts = Object.entries(services).flatMap(([name, service]) =>
      bindMountSources(obj(service, name)).map((mount) => ({ name, ...mount })),
    );
    expect(mounts.length).toBeGreaterThanOrEqual(3);
    for (const mount of mounts) expect(existsSync(join(ROOT, mount.source)), `${mount.name}: ${mount.source}`).toBe(true);
  });

  it('wires Prometheus to the agent and Grafana to Prometheus and the dashboard directory', () => {
    const prometheusMount = bindMountSources(obj(services.prometheus, 'prometheus')).find((m) => m.target === '/etc/prometheus/prometheus.yml');
    expect(prometheusMount?.source).toBe('./deploy/prometheus/prometheus.yml');
    const scrape = list(yamlFile('deploy/prometheus/prometheus.yml').scrape_configs, 'scrape_configs').map((j) => obj(j, 'job'));
    const job = scrape.find((j) => j.job_name === 'tg-agent');
    expect(job).toBeDefined();
    expect(job!.metrics_path ?? '/metrics').toBe('/metrics');
    const targets = list(obj(list(job!.static_configs, 'static_configs')[0], 'static_config').targets, 'targets');
    expect(targets).toEqual([`agent:${METRICS_PORT}`]);

    const grafanaMounts = bindMountSources(obj(services.grafana, 'grafana'));
    const provisioning = grafanaMounts.find((m) => m.target === '/etc/grafana/provisioning');
    expect(provisioning?.source).toBe('./deploy/grafana/provisioning');
    const provider = list(yamlFile('deploy/grafana/provisioning/dashboards/tg-agent.yml').providers, 'providers').map((p) => obj(p, 'provider'))[0]!;
    const dashboardsPath = obj(provider.options, 'options').path;
    const dashboards = grafanaMounts.find((m) => m.target === dashboardsPath);
    expect(dashboards?.source).toBe('./deploy/grafana/dashboards');
    expect(existsSync(join(ROOT, dashboards!.source, 'tg-agent.json'))).toBe(true);

    const datasource = list(yamlFile('deploy/grafana/provisioning/datasources/prometheus.yml').datasources, 'datasources').map((d) => obj(d, 'ds'))[0]!;
    expect(datasource.type).toBe('prometheus');
    const { host, port } = hostPort(String(datasource.url));
    expect(Object.keys(services)).toContain(host);
    expect(list(obj(services[host], host).ports, 'ports').map(String)).toContain(`${port}:${port}`);
    expect(composeEnvironment(obj(services.grafana, 'grafana'))).toMatchObject({ GF_AUTH_ANONYMOUS_ENABLED: 'true', GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer' });
  });
});

describe('TrustGraph compose snippet and scrape job', () => {
  const snippet = obj(yamlFile('deploy/trustgraph-compose-snippet.yml').services, 'snippet services');

  it('adds a service with id agent-manager that reads only known settings and reaches TrustGraph\'s pulsar', () => {
    const service = obj(snippet['agent-manager'], 'agent-manager');
    expect(service.image).toBe(agent.image);
    const env = composeEnvironment(service);
    expect(unknownSettingNames(Object.keys(env))).toEqual([]);
    const settings = loadSettings([], env).settings!;
    expect(settings.id).toBe('agent-manager');
    expect(hostPort(settings.pulsarHost).host).toBe('pulsar');
    expect(hostPort(settings.pulsarWebSocketUrl!).host).toBe('pulsar');
  });

  it('turns on the broker\'s WebSocket service through the apachepulsar image\'s PULSAR_PREFIX_ mechanism', () => {
    expect(composeEnvironment(obj(snippet.pulsar, 'pulsar')).PULSAR_PREFIX_webSocketServiceEnabled).toBe('true');
    const text = read('deploy/trustgraph-compose-snippet.yml');
    expect(text).toContain('trustgraph.agent.orchestrator.Processor');
    expect(text).toContain('TG_AGENT_TRANSPORT: native');
  });

  it('has a scrape job for that service on the default metrics port', () => {
    const jobs = list(yamlFile('deploy/prometheus/scrape-tg-agent.yml').scrape_configs, 'scrape_configs').map((j) => obj(j, 'job'));
    expect(jobs).toHaveLength(1);
    const targets = list(obj(list(jobs[0]!.static_configs, 'static_configs')[0], 'static_config').targets, 'targets');
    expect(targets).toEqual([`agent-manager:${METRICS_PORT}`]);
    expect(Object.keys(snippet)).toContain('agent-manager');
  });
});

describe('Kubernetes manifests', () => {
  it('parse, and kustomization lists existing files: every manifest except the example Secret', () => {
    const files = readdirSync(join(ROOT, K8S_DIR)).filter((f) => /\.ya?ml$/.test(f));
    const kustomization = yamlFile(`${K8S_DIR}/kustomization.yaml`);
    const resources = list(kustomization.resources, 'resources').map(String);
    for (const resource of resources) {
      expect(existsSync(join(ROOT, K8S_DIR, resource)) && statSync(join(ROOT, K8S_DIR, resource)).isFile(), resource).toBe(true);
    }
    const expected = files.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.yaml').sort();
    expect([...resources].sort()).toEqual(expected);
    for (const { file, doc } of kubernetesDocuments()) {
      expect(typeof doc.kind, `${file} kind`).toBe('string');
      if (file !== 'kustomization.yaml') expect(typeof obj(doc.metadata, `${file} metadata`).name, `${file} name`).toBe('string');
    }
  });

  it('uses only environment variable names src/settings.ts reads, with values it accepts', () => {
    const configMap = manifest('ConfigMap');
    const data = obj(configMap.data, 'ConfigMap data') as Record<string, unknown>;
    expect(Object.values(data).every((v) => typeof v === 'string'), 'ConfigMap values are strings').toBe(true);
    expect(unknownSettingNames(Object.keys(data))).toEqual([]);
    for (const name of ['PULSAR_HOST', 'PULSAR_WS_URL', 'TG_AGENT_CONCURRENCY', 'TG_AGENT_MAX_ITERATIONS', 'LOG_LEVEL']) {
      expect(Object.keys(data)).toContain(name);
    }
    expect(() => loadSettings([], data as Record<string, string>)).not.toThrow();

    const secret = manifest('Secret');
    const secretData = { ...(secret.stringData as Obj | undefined), ...(secret.data as Obj | undefined) };
    expect(Object.keys(secretData).sort()).toEqual(['PULSAR_API_KEY', 'TG_AGENT_HTTP_TOKEN', 'TG_AGENT_SIGNING_KEY']);
    expect(unknownSettingNames(Object.keys(secretData))).toEqual([]);
    const container = deploymentContainer();
    const env = container.env === undefined ? [] : list(container.env, 'env').map((e) => String(obj(e, 'env').name));
    expect(unknownSettingNames(env)).toEqual([]);
  });

  it('ships a Secret whose placeholders cannot be used by accident', () => {
    const secret = manifest('Secret');
    const values = obj(secret.stringData, 'stringData') as Record<string, string>;
    expect(Object.values(values).every((v) => /CHANGE-ME/.test(v))).toBe(true);
    expect(() => loadSettings([], values)).toThrow(SettingsError);
    expect(() => loadSettings([], values)).toThrow(/TG_AGENT_SIGNING_KEY/);
  });

  it('runs the image with the ConfigMap and Secret, on the default metrics port, probing /healthz and /readyz', () => {
    const container = deploymentContainer();
    expect(containerPort(container, 'metrics')).toBe(METRICS_PORT);
    const configured = obj(manifest('ConfigMap').data, 'data').TG_AGENT_METRICS_PORT;
    if (configured !== undefined) expect(Number(configured)).toBe(METRICS_PORT);

    const envFrom = list(container.envFrom, 'envFrom').map((e) => obj(e, 'envFrom'));
    const configMapRef = envFrom.map((e) => e.configMapRef as Obj | undefined).find(Boolean);
    const secretRef = envFrom.map((e) => e.secretRef as Obj | undefined).find(Boolean);
    expect(configMapRef?.name).toBe(obj(manifest('ConfigMap').metadata, 'metadata').name);
    expect(secretRef?.name).toBe(obj(manifest('Secret').metadata, 'metadata').name);
    // The Secret is an example that kustomization does not apply: the pod must start without it.
    expect(secretRef?.optional).toBe(true);

    const template = obj(obj(manifest('Deployment').spec, 'spec').template, 'template');
    const annotations = obj(obj(template.metadata, 'metadata').annotations, 'annotations');
    expect(annotations).toMatchObject({ 'prometheus.io/port': String(METRICS_PORT), 'prometheus.io/path': '/metrics' });

    const liveness = obj(obj(container.livenessProbe, 'livenessProbe').httpGet, 'httpGet');
    const readiness = obj(obj(container.readinessProbe, 'readinessProbe').httpGet, 'httpGet');
    expect(liveness).toMatchObject({ path: '/healthz', port: 'metrics' });
    expect(readiness).toMatchObject({ path: '/readyz', port: 'metrics' });
  });

  it('is locked down and sized: non-root, read-only root filesystem, requests and limits, 2 replicas', () => {
    const deployment = manifest('Deployment');
    expect(obj(deployment.spec, 'spec').replicas).toBe(2);
    const container = deploymentContainer();
    const securityContext = obj(container.securityContext, 'securityContext');
    expect(securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const resources = obj(container.resources, 'resources');
    expect(obj(resources.requests, 'requests')).toMatchObject({ cpu: '100m', memory: '128Mi' });
    expect(obj(resources.limits, 'limits')).toMatchObject({ cpu: '1', memory: '512Mi' });
  });

  it('gives pods longer to stop than the service takes to drain', () => {
    const podSpec = obj(obj(obj(manifest('Deployment').spec, 'spec').template, 'template').spec, 'pod spec');
    const configured = obj(manifest('ConfigMap').data, 'data').TG_AGENT_SHUTDOWN_GRACE;
    const grace = configured === undefined ? DEFAULTS.shutdownGraceSeconds : Number(configured);
    expect(grace).toBeGreaterThanOrEqual(DEFAULTS.shutdownGraceSeconds);
    expect(Number(podSpec.terminationGracePeriodSeconds)).toBeGreaterThan(grace);
  });

  it('selects the pods from the Service, and the Service\'s metrics port from the ServiceMonitor', () => {
    const deployment = manifest('Deployment');
    const podLabels = obj(obj(obj(obj(deployment.spec, 'spec').template, 'template').metadata, 'metadata').labels, 'labels');
    const service = manifest('Service');
    const serviceSpec = obj(service.spec, 'spec');
    expect(podLabels).toMatchObject(obj(serviceSpec.selector, 'selector'));
    expect(podLabels).toMatchObject(obj(obj(obj(deployment.spec, 'spec').selector, 'selector').matchLabels, 'matchLabels'));
    const servicePort = list(serviceSpec.ports, 'ports').map((p) => obj(p, 'port')).find((p) => p.name === 'metrics');
    expect(servicePort).toBeDefined();
    expect(servicePort!.port).toBe(METRICS_PORT);
    expect([containerPort(deploymentContainer(), 'metrics'), 'metrics']).toContain(servicePort!.targetPort);

    const monitor = manifest('ServiceMonitor');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    const monitorSpec = obj(monitor.spec, 'spec');
    const serviceLabels = obj(obj(service.metadata, 'metadata').labels, 'labels');
    expect(serviceLabels).toMatchObject(obj(obj(monitorSpec.selector, 'selector').matchLabels, 'matchLabels'));
    const endpoints = list(monitorSpec.endpoints, 'endpoints').map((e) => obj(e, 'endpoint'));
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]).toMatchObject({ port: servicePort!.name, path: '/metrics' });
  });
});

describe('probe and scrape paths are served by the HTTP server', () => {
  let server: HttpServer;
  let base: string;
  let ready = false;

  beforeAll(async () => {
    server = new HttpServer(
      {
        readiness: () => ({ ready, detail: ready ? 'stub ready' : 'stub not ready' }),
        metrics: async () => ({ contentType: 'text/plain; version=0.0.4', body: 'tg_config_version{processor="agent-manager"} 1\n' }),
      },
      pino({ level: 'silent' }),
    );
    base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
  });
  afterAll(async () => {
    await server.close();
  });

  const paths = () => {
    const container = deploymentContainer();
    const composeUrl = /https?:\/\/[^\s'"]+/.exec(healthcheckCommand(agent))![0];
    const healthcheck = dockerfile.find((i) => i.keyword === 'HEALTHCHECK')!.args;
    const monitor = list(obj(manifest('ServiceMonitor').spec, 'spec').endpoints, 'endpoints').map((e) => obj(e, 'endpoint'));
    return {
      liveness: [
        String(obj(obj(container.livenessProbe, 'probe').httpGet, 'httpGet').path),
        new URL(composeUrl).pathname,
        /'(\/[a-z]+)'/.exec(healthcheck)![1]!,
      ],
      readiness: String(obj(obj(container.readinessProbe, 'probe').httpGet, 'httpGet').path),
      metrics: [String(monitor[0]!.path), '/metrics'],
    };
  };

  it('answers the liveness paths with 200 whether or not the service is ready', async () => {
    for (const state of [false, true]) {
      ready = state;
      for (const path of paths().liveness) expect((await fetch(base + path)).status, `${path} ready=${state}`).toBe(200);
    }
  });

  it('answers the readiness path with 503 until ready, then 200', async () => {
    const { readiness } = paths();
    ready = false;
    const notReady = await fetch(base + readiness);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain('stub not ready');
    ready = true;
    expect((await fetch(base + readiness)).status).toBe(200);
  });

  it('serves the scrape path', async () => {
    for (const path of paths().metrics) {
      const response = await fetch(base + path);
      expect(response.status, path).toBe(200);
      expect(await response.text()).toContain('tg_config_version');
    }
    expect((await fetch(`${base}/not-a-probe`)).status).toBe(404);
  });
});

describe('the checks themselves', () => {
  it('flag environment variable names the service does not read', () => {
    expect(unknownSettingNames(['PULSAR_HOST', 'PULSAR_URL', 'TG_AGENT_CONCURENCY'])).toEqual(['PULSAR_URL', 'TG_AGENT_CONCURENCY']);
  });

  it('read both compose environment forms', () => {
    expect(composeEnvironment({ environment: ['A=1', 'B=x=y'] })).toEqual({ A: '1', B: 'x=y' });
    expect(composeEnvironment({ environment: { A: 1, B: null } })).toEqual({ A: '1', B: '' });
  });

  it('parse Dockerfile stages and continuation lines', () => {
    const parsed = dockerfileInstructions('FROM x AS one\nRUN a \\\n  b\n# c\nFROM y AS two\nUSER 1');
    expect(parsed).toEqual([
      { stage: 'one', keyword: 'FROM', args: 'x AS one' },
      { stage: 'one', keyword: 'RUN', args: 'a    b' },
      { stage: 'two', keyword: 'FROM', args: 'y AS two' },
      { stage: 'two', keyword: 'USER', args: '1' },
    ]);
  });
});
