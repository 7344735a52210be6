import type { Command } from './command.js';

/** Commands are loaded lazily so `ferry explain` does not pay for the Kubernetes client. */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  snapshot: {
    summary: 'capture a live cluster (and optionally its etcd) into a snapshot directory',
    load: async () => (await import('./snapshot.js')).command,
  },
  facts: {
    summary: 'print the facts derived from a snapshot, each with its provenance',
    load: async () => (await import('./facts.js')).command,
  },
  audit: {
    summary: 'find what would break the migration: blockers, risks, with evidence and fixes',
    load: async () => (await import('./audit.js')).command,
  },
  explain: {
    summary: 'explain an error message or a log from a migration: rule, cause, fix',
    load: async () => (await import('./explain.js')).command,
  },
  generate: {
    summary:
      'write the migration kit (Talos secrets, kubeadm-side preparation, RBAC, OpenTofu) from a snapshot',
    load: async () => (await import('./generate.js')).command,
  },
  plan: {
    summary: 'build the migration plan and runbook: phases of typed, gated, undoable steps',
    load: async () => (await import('./plan.js')).command,
  },
  lab: {
    summary: 'run a local lab cluster from a snapshot: up, status, down (real etcd, lab API servers, nodes)',
    load: async () => (await import('./lab.js')).command,
  },
  run: {
    summary: 'execute a plan: gated, journalled, resumable, with availability probes',
    load: async () => (await import('./run.js')).command,
  },
  mgmt: {
    summary:
      'the management cluster: bootstrap, encrypted backups to S3 (backup), restore, status, upgrade-providers',
    load: async () => (await import('./mgmt.js')).command,
  },
  capi: {
    summary: 'Cluster API: adopt the running cluster into the management cluster (capi adopt)',
    load: async () => (await import('./capi.js')).command,
  },
  fleet: {
    summary:
      'many clusters as one: audit side by side (fleet audit), plan in waves (fleet plan), follow the runs (fleet status)',
    load: async () => (await import('./fleet.js')).command,
  },
  upgrade: {
    summary: 'plan a Kubernetes or Talos upgrade of a cluster Cluster API manages (upgrade plan)',
    load: async () => (await import('./upgrade.js')).command,
  },
  rehearse: {
    summary: 'rehearse the migration on a lab: lab up, generate, plan, run, report, lab down',
    load: async () => (await import('./rehearse.js')).command,
  },
};
