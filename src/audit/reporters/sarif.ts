/**
 * SARIF 2.1.0 for code-scanning UIs. Files (PKI, manifests, kubeadm config) become physical
 * locations with a line when known; Kubernetes objects, nodes and etcd members become logical
 * locations. Suppressed findings stay in `results` with a `suppressions` entry, as SARIF
 * intends, so a viewer shows them as accepted rather than losing them.
 */
import type { Location, Log, ReportingDescriptor, Result } from 'sarif';
import { ruleDocsUri } from '../docs-link.js';
import type { AuditReport } from '../engine.js';
import {
  describeObject,
  describeSubject,
  type Evidence,
  type Finding,
  fingerprintOf,
  type KitResolution,
  type Severity,
} from '../findings.js';
import type { Suppression } from '../suppressions.js';
import { describeTarget, skipReason, summaryLine } from './common.js';

const LEVEL: Record<Severity, Result.level> = { blocker: 'error', risk: 'warning', info: 'note' };
/** Locations per result are capped: a finding about 5,000 nodes lists the first ones. */
const MAX_LOCATIONS = 20;
export const FINGERPRINT_KEY = 'ferry/v1';
/**
 * The rule + object a result is about, without the field: findings of one rule on one object
 * (two fields of the same Deployment) group together in a code-scanning UI.
 */
export const OBJECT_KEY = 'ferry/rule-object/v1';

export function renderSarif(r: AuditReport): string {
  return `${JSON.stringify(sarifLog(r), null, 2)}\n`;
}

export function sarifLog(r: AuditReport): Log {
  const ruleIndex = new Map(r.rules.map((m, i) => [m.id, i]));
  const rules: ReportingDescriptor[] = r.rules.map((m) => ({
    id: m.id,
    name: m.id,
    shortDescription: { text: m.title },
    fullDescription: { text: m.description ?? m.title },
    help: {
      text: `${m.description ?? m.title} Inputs: ${m.inputs.join(', ')}.${m.docs ? ` See ${m.docs}.` : ''}`,
    },
    // Code-scanning UIs link the rule to it; the same docs/rules.md#<id> section `ferry explain` cites.
    ...(m.docs ? { helpUri: ruleDocsUri(m.id, m.docs) } : {}),
    defaultConfiguration: { level: LEVEL[m.severity] },
    properties: { family: m.family, severity: m.severity, inputs: m.inputs, outcome: m.outcome },
  }));

  const results: Result[] = [
    ...r.findings.map((f) => result(f, ruleIndex, r.baseline ? 'new' : undefined)),
    ...r.suppressed.map(({ finding, by }) => ({
      ...result(finding, ruleIndex, undefined),
      suppressions: [suppression(by)],
    })),
    // Resolved by the kit: accepted outside the results, the kit file being where it is fixed.
    ...r.resolved.map((f) => ({
      ...result(f, ruleIndex, undefined),
      ...(f.resolution ? { suppressions: [kitSuppression(f.resolution)] } : {}),
    })),
  ];

  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'ferry',
            version: r.tool.version,
            semanticVersion: r.tool.version,
            rules,
          },
        },
        invocations: [
          {
            executionSuccessful: r.errors.length === 0,
            endTimeUtc: r.generatedAt,
            toolConfigurationNotifications: [
              ...r.skipped.map((s) => ({
                level: 'warning' as const,
                descriptor: { id: s.ruleId, index: ruleIndex.get(s.ruleId) ?? -1 },
                message: { text: `skipped: ${skipReason(s)}. ${s.howToProvide}` },
              })),
              ...r.expiredSuppressions.map((e) => ({
                level: 'note' as const,
                message: {
                  text: `expired suppression ${e.suppression.file}:${e.suppression.line} (${e.suppression.rule}, expired ${e.suppression.expires}) no longer applied; ${e.wouldMatch} finding(s) back`,
                },
              })),
            ],
            toolExecutionNotifications: r.errors.map((e) => ({
              level: 'error' as const,
              descriptor: { id: e.ruleId, index: ruleIndex.get(e.ruleId) ?? -1 },
              message: { text: `rule failed: ${e.message}` },
            })),
          },
        ],
        columnKind: 'unicodeCodePoints',
        results,
        properties: {
          target: r.target,
          targetDescription: describeTarget(r.target),
          snapshot: r.snapshot.source,
          counts: r.counts,
          summary: summaryLine(r),
        },
      },
    ],
  };
}

function result(
  f: Finding,
  ruleIndex: Map<string, number>,
  baselineState: Result.baselineState | undefined,
): Result {
  const locations = f.evidence.slice(0, MAX_LOCATIONS).map(location);
  if (locations.length === 0)
    locations.push({ logicalLocations: [{ name: describeSubject(f.subject), kind: 'resource' }] });
  return {
    ruleId: f.ruleId,
    ruleIndex: ruleIndex.get(f.ruleId) ?? -1,
    level: LEVEL[f.severity],
    message: { text: `${f.message} Fix: ${f.remediation}` },
    locations,
    partialFingerprints: {
      [FINGERPRINT_KEY]: f.fingerprint,
      [OBJECT_KEY]: fingerprintOf(f.ruleId, f.subject, undefined),
    },
    ...(baselineState ? { baselineState } : {}),
    properties: {
      severity: f.severity,
      subject: describeSubject(f.subject),
      ...(f.field !== undefined ? { field: f.field } : {}),
      remediation: f.remediation,
      artifacts: f.artifacts,
      target: f.target,
      ...(f.resolution ? { resolution: f.resolution } : {}),
      ...(f.kitGap ? { kitGap: f.kitGap } : {}),
    },
  };
}

function location(e: Evidence): Location {
  const msg = 'observed' in e || 'note' in e ? { message: { text: evidenceNote(e) } } : {};
  switch (e.kind) {
    case 'file':
      return {
        physicalLocation: {
          artifactLocation: { uri: toUri(e.path) },
          ...(e.line !== undefined && e.line > 0 ? { region: { startLine: e.line } } : {}),
        },
        ...msg,
      };
    case 'flag':
      if (e.from?.kind === 'file')
        return {
          physicalLocation: {
            artifactLocation: { uri: toUri(e.from.path) },
            ...(e.from.line !== undefined && e.from.line > 0 ? { region: { startLine: e.from.line } } : {}),
          },
          logicalLocations: [
            {
              name: `--${e.flag}`,
              fullyQualifiedName: `${e.component}${e.node ? `@${e.node}` : ''}/--${e.flag}`,
              kind: 'member',
            },
          ],
          ...msg,
        };
      return {
        logicalLocations: [
          {
            name: `--${e.flag}`,
            fullyQualifiedName: `${e.component}${e.node ? `@${e.node}` : ''}/--${e.flag}`,
            kind: 'member',
          },
        ],
        ...msg,
      };
    case 'object':
      return {
        logicalLocations: [
          {
            name: e.object.name,
            fullyQualifiedName: `${describeObject(e.object)}${e.field ? `#${e.field}` : ''}`,
            kind: 'resource',
          },
        ],
        ...msg,
      };
    case 'node':
      return {
        logicalLocations: [
          {
            name: e.node,
            fullyQualifiedName: `Node ${e.node}${e.field ? `#${e.field}` : ''}`,
            kind: 'resource',
          },
        ],
        ...msg,
      };
    case 'etcd-member': {
      const name = e.name ?? e.memberId ?? e.endpoint ?? 'etcd';
      return {
        logicalLocations: [
          {
            name,
            fullyQualifiedName: `etcd member ${name}${e.field ? `#${e.field}` : ''}`,
            kind: 'resource',
          },
        ],
        ...msg,
      };
    }
    case 'tls':
      return {
        logicalLocations: [{ name: e.address, fullyQualifiedName: `TLS ${e.address}`, kind: 'resource' }],
        ...msg,
      };
    case 'api':
      return {
        logicalLocations: [
          {
            name: e.path,
            fullyQualifiedName: `GET ${e.path}${e.field ? `#${e.field}` : ''}`,
            kind: 'resource',
          },
        ],
        ...msg,
      };
    case 'target':
      return {
        logicalLocations: [{ name: e.field, fullyQualifiedName: `target ${e.field}`, kind: 'variable' }],
        ...msg,
      };
  }
}

function evidenceNote(e: Evidence): string {
  const parts: string[] = [];
  if (e.observed !== undefined) parts.push(`observed: ${e.observed}`);
  if (e.expected !== undefined) parts.push(`expected: ${e.expected}`);
  if (e.note !== undefined) parts.push(e.note);
  return parts.join('; ') || 'evidence';
}

/** SARIF wants URI references: relative paths stay relative, spaces and such are encoded. */
function toUri(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function suppression(by: Suppression) {
  return {
    kind: 'external' as const,
    status: 'accepted' as const,
    justification: by.reason,
    location: {
      physicalLocation: { artifactLocation: { uri: toUri(by.file) }, region: { startLine: by.line } },
    },
    properties: { rule: by.rule, scope: by.scope, ...(by.expires ? { expires: by.expires } : {}) },
  };
}

function kitSuppression(res: KitResolution) {
  const file = res.files[0];
  return {
    kind: 'external' as const,
    status: 'accepted' as const,
    justification: `resolved by the kit ${res.kit}: ${res.how}`,
    ...(file
      ? { location: { physicalLocation: { artifactLocation: { uri: toUri(`${res.kit}/${file}`) } } } }
      : {}),
    properties: { kit: res.kit, files: res.files },
  };
}
