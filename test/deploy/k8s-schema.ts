// Checks Kubernetes objects against the API's schemas (the OpenAPI schemas compiled into
// kubernetes-models), and reports fields the API does not know, as `kubectl apply` does with
// its default strict field validation: the compiled schemas let unknown fields pass.
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';

/** A Kubernetes object as written in a manifest. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

type ModelClass = new (data: never) => { validate(): void };

/** The kinds the manifests may use, by `apiVersion/kind`. */
const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap as unknown as ModelClass,
  'v1/Secret': Secret as unknown as ModelClass,
  'v1/Service': Service as unknown as ModelClass,
  'apps/v1/StatefulSet': StatefulSet as unknown as ModelClass,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as unknown as ModelClass,
};

/** One schema violation: where (a JSON pointer into the object) and what. */
export interface SchemaError {
  instancePath: string;
  message: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function modelOf(obj: K8sObject): ModelClass {
  const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}; add its model to test/deploy/k8s-schema.ts`);
  return Model;
}

function errorsOf(Model: ModelClass, data: unknown): SchemaError[] {
  try {
    new Model(data as never).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: Array<{ instancePath: string; message?: string }> }).errors;
    if (!errors) throw err;
    return errors.map((e) => ({ instancePath: e.instancePath, message: e.message ?? 'is invalid' }));
  }
}

/** The violations of the API schema of `obj`'s kind; throws for a kind the manifests do not use. */
export function schemaErrors(obj: K8sObject): SchemaError[] {
  return errorsOf(modelOf(obj), obj);
}

const pointer = (path: readonly (string | number)[]): string => path.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/**
 * The fields of `obj` (JSON pointers) that its kind's schema does not define. Each field is
 * replaced in turn by a value of no JSON type: a field the schema defines (a property, or a
 * key of a typed map such as labels) is then reported invalid at its place; an unknown one
 * is not. The fields below an unknown one are not looked at.
 */
export function unknownFields(obj: K8sObject): string[] {
  const Model = modelOf(obj);
  const out: string[] = [];
  const probe = Symbol('not a JSON value');
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, [...path, i]));
      return;
    }
    if (!isObj(node)) return;
    for (const key of Object.keys(node)) {
      const at = [...path, key];
      const copy = structuredClone(obj) as unknown as Record<string, unknown>;
      let parent: Record<string, unknown> = copy;
      for (const seg of path) parent = parent[seg as string] as Record<string, unknown>;
      parent[key] = probe;
      const where = pointer(at);
      const flagged = errorsOf(Model, copy).some((e) => e.instancePath === where || e.instancePath.startsWith(`${where}/`));
      if (flagged) walk(node[key], at);
      else out.push(where);
    }
  };
  walk(obj, []);
  return out;
}
