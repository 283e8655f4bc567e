import { isIpAllowed } from '@envoi/shared-net';

/** A credential restricted to some client addresses; an empty list allows every address. */
export interface IpRestricted {
  ip_allow_list: readonly string[];
}

/** Whether a client at `clientIp` may use the credential (exact addresses or CIDR ranges). */
export function allowsClientIp(credential: IpRestricted, clientIp: string): boolean {
  return isIpAllowed(clientIp, credential.ip_allow_list);
}
