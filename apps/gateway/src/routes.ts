import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';

/** One route of a controller, as its decorators declare it. */
export interface DeclaredRoute {
  /** `GET /v2/accounts/:account_id/domains`. */
  name: string;
  method: string;
  path: string;
  controller: Type;
  methodName: string;
  handler: object;
}

function joinPath(...parts: string[]): string {
  return `/${parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
}

/** Every route of the controllers, read from Nest's decorator metadata. */
export function declaredRoutes(controllers: readonly Type[]): DeclaredRoute[] {
  return controllers.flatMap((controller) => {
    const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
    const prototype = controller.prototype as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype)
      .filter((name) => name !== 'constructor')
      .flatMap((methodName) => {
        const handler = prototype[methodName];
        if (typeof handler !== 'function') return [];
        const subPath = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        if (subPath === undefined) return [];
        const method =
          RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? '?';
        const path = joinPath(base, subPath);
        return [{ name: `${method} ${path}`, method, path, controller, methodName, handler }];
      });
  });
}
