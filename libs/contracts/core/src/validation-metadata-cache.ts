import { getMetadataStorage, type MetadataStorage } from 'class-validator';

type LookUp = MetadataStorage['getTargetValidationMetadatas'];
type Constraints = ReturnType<LookUp>;
type Target = Parameters<LookUp>[0];

const cached = new WeakSet<MetadataStorage>();

/**
 * Makes class-validator remember the constraints it finds for a class (per schema and group
 * options). It looks them up again for every object it validates, nested ones included, by
 * testing the class against every class it knows (`instanceof` each): under bench:send that
 * look-up alone was 8% of the gateway's CPU and 4% of the messages service's. What it finds only
 * changes when a constraint is registered (a class loaded later), which drops what was
 * remembered. Idempotent; the answers are the same arrays every time, which class-validator only
 * reads.
 */
export function cacheValidationMetadata(storage: MetadataStorage = getMetadataStorage()): void {
  if (cached.has(storage)) return;
  cached.add(storage);
  let remembered = new Map<Target, Map<string, Constraints>>();
  const lookUp: LookUp = storage.getTargetValidationMetadatas.bind(storage);
  const register = storage.addValidationMetadata.bind(storage);
  storage.addValidationMetadata = (metadata) => {
    remembered = new Map();
    register(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema}\u0000${String(always)}\u0000${String(strictGroups)}\u0000${groups?.join('\u0000') ?? ''}`;
    let byOptions = remembered.get(target);
    if (!byOptions) {
      byOptions = new Map();
      remembered.set(target, byOptions);
    }
    let constraints = byOptions.get(key);
    if (!constraints) {
      constraints = lookUp(target, schema, always, strictGroups, groups);
      byOptions.set(key, constraints);
    }
    return constraints;
  };
}
