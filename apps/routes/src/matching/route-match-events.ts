import { RoutesSubjects } from '@envoi/contracts-routes';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

/**
 * Broadcasts for the MX replicas' route set caches, sent once a change has committed (at most
 * once; the caches also expire). A domain of null: any domain's route set may have changed.
 */
@Injectable()
export class RouteMatchEvents {
  private readonly logger = new Logger(RouteMatchEvents.name);

  constructor(private readonly rpc: RpcClient) {}

  changed(domains: ReadonlyArray<string | null>): void {
    const distinct = new Set(domains);
    for (const domain of distinct.has(null) ? [null] : distinct) {
      try {
        this.rpc.emit(RoutesSubjects.matchChanged, { domain });
      } catch (error) {
        this.logger.error(
          `could not announce a route change of ${domain ?? 'every domain'}: ${String(error)}`,
        );
      }
    }
  }
}
