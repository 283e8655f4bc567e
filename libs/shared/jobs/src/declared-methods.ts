import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';

/** A provider method carrying a declaration (a decorator's metadata), bound to its instance. */
export interface DeclaredMethod<Declaration> {
  declaration: Declaration;
  /** The provider's class name. */
  owner: string;
  /** `Owner.method`, for log lines and boot errors. */
  name: string;
  call: (...args: never[]) => unknown;
}

/**
 * Finds, on the application's providers, the methods decorated with a metadata key: how the kit
 * discovers declared handlers (stream consumers, periodic jobs) at boot.
 */
@Injectable()
export class DeclaredMethods {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  find<Declaration>(metadataKey: string | symbol): DeclaredMethod<Declaration>[] {
    const found: DeclaredMethod<Declaration>[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) {
        continue;
      }
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = (instance as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const declaration = this.reflector.get<Declaration | undefined>(metadataKey, handler);
        if (declaration === undefined) continue;
        const owner = instance.constructor.name;
        found.push({
          declaration,
          owner,
          name: `${owner}.${method}`,
          call: (handler as (...args: never[]) => unknown).bind(instance),
        });
      }
    }
    return found;
  }
}
