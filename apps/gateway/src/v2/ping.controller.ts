import type { MessageResponse } from '@envoi/contracts-core';
import { Controller, Get } from '@nestjs/common';

import { RequireScopes } from '../auth/scope-policy';

@Controller('v2/ping')
export class PingController {
  /** Any valid key: answers when authentication works. */
  @Get()
  @RequireScopes()
  ping(): MessageResponse {
    return { message: 'pong' };
  }
}
