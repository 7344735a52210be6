/**
 * Carrying kubeadm component flags into Talos `extraArgs`: grouped by name (a repeated flag keeps
 * its values in order), minus Talos's deny-list and minus values Talos cannot have (host file
 * paths). Every flag left behind becomes a GenerateNote — never a silent drop.
 */
import type { Flag, SourceRef } from '../../snapshot/model.js';
import type { GenerateNote } from '../artifact.js';

export interface ExtraArg {
  name: string;
  /** One value, or several when the flag repeats (Talos ≥ v1.13 writes them as a list). */
  values: string[];
  sources: SourceRef[];
}

export interface ArgPolicy {
  /** Component name for messages, e.g. "kube-apiserver". */
  component: string;
  /** Blockers.md rule id quoted in the note of a denied flag. */
  deniedRule: string;
  denied: readonly string[];
  /** Flags ferry writes in another form (issuer, PodSecurity …): skipped here without a note. */
  handled?: readonly string[];
  /** Specific reasons for flags Talos manages itself, shown instead of the generic text. */
  reasons?: Record<string, string>;
  /** Talos ≥ v1.13 accepts a list per flag; older releases one string only. */
  lists: boolean;
}

export function carryArgs(
  flags: Flag[],
  sources: SourceRef[],
  policy: ArgPolicy,
): { args: ExtraArg[]; notes: GenerateNote[] } {
  const grouped = new Map<string, string[]>();
  for (const f of flags) grouped.set(f.name, [...(grouped.get(f.name) ?? []), f.value]);
  const args: ExtraArg[] = [];
  const notes: GenerateNote[] = [];
  const source = sources[0];
  const note = (severity: GenerateNote['severity'], message: string) =>
    notes.push(source ? { severity, message, source } : { severity, message });
  for (const [name, values] of grouped) {
    if (policy.handled?.includes(name)) continue;
    const shown = `${policy.component} --${name}=${values.join(',')}`;
    const reason = policy.reasons?.[name];
    if (policy.denied.includes(name)) {
      note(
        'warning',
        `${shown} is not carried: Talos rejects it in extraArgs ("extra arg \\"${name}\\" is not allowed", ${policy.deniedRule})` +
          (reason ? `; ${reason}` : ''),
      );
      continue;
    }
    if (reason) {
      note('warning', `${shown} is not carried: ${reason}`);
      continue;
    }
    const paths = values.filter(isHostPath);
    if (paths.length > 0) {
      note(
        'warning',
        `${shown} is not carried: ${paths.join(', ')} is a file on the kubeadm hosts that Talos nodes do not have; ` +
          'provide the content through the machine config (files/inline documents) and add the flag back',
      );
      continue;
    }
    let kept = values;
    if (!policy.lists && new Set(values).size > 1) {
      kept = [values[values.length - 1] ?? ''];
      note(
        'warning',
        `${policy.component} --${name} is repeated (${values.join(', ')}); this Talos release takes one value per flag, ferry keeps the last`,
      );
    } else if (!policy.lists) {
      kept = [values[0] ?? ''];
    }
    args.push({ name, values: kept, sources });
  }
  return { args, notes };
}

/** Values that name a file or directory on the host (absolute paths, also inside key=value lists). */
export function isHostPath(value: string): boolean {
  return value.startsWith('/') || /(^|[,=])\/[^,]/.test(value);
}

/** The extraArgs map Talos reads: a string, or a list of strings (a repeated flag, ≥ v1.13). */
export function extraArgsMap(args: ExtraArg[], lists: boolean): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const a of args) out[a.name] = lists && a.values.length > 1 ? [...a.values] : (a.values[0] ?? '');
  return out;
}
