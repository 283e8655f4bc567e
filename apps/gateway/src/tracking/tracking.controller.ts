import { MessagesSubjects, TRACKING_TOKEN_MAX_LENGTH } from '@envoi/contracts-messages';
import { RpcClient } from '@envoi/shared-nats';
import { canonicalIp } from '@envoi/shared-net';
import { Controller, Get, Header, Param, Redirect, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { Public } from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { PerClientIpRateLimit } from '../http/edge-route';

/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const TOKEN = /^[A-Za-z0-9_-]+$/;

function token(raw: string): string {
  if (raw.length > TRACKING_TOKEN_MAX_LENGTH || !TOKEN.test(raw)) {
    throw new ApiError(404, 'no such tracking link');
  }
  return raw;
}

function visitor(request: FastifyRequest): { user_agent: string; ip: string } {
  const userAgent = request.headers['user-agent'] ?? '';
  return { user_agent: userAgent.slice(0, 1_024), ip: canonicalIp(request.ip) ?? request.ip };
}

/**
 * The public open and click tracking routes (platform notes 3.3) that tracked mail points at:
 * no credentials, the token is the only input and the messages service checks its signature.
 * A click goes to the URL stored with the message, never to one taken from the request. Each
 * client IP is rate limited (RATE_LIMIT_TRACKING_*); the messages service also caps the events.
 */
@Controller('t')
export class TrackingController {
  constructor(private readonly rpc: RpcClient) {}

  @Get('o/:token')
  @Public()
  @PerClientIpRateLimit()
  @Header('Content-Type', 'image/gif')
  @Header('Cache-Control', 'no-store, private')
  async open(@Param('token') raw: string, @Req() request: FastifyRequest): Promise<Buffer> {
    await this.rpc.request(
      MessagesSubjects.trackOpen,
      { token: token(raw), ...visitor(request) },
      { requestId: request.id },
    );
    return PIXEL;
  }

  @Get('c/:token')
  @Public()
  @PerClientIpRateLimit()
  @Header('Cache-Control', 'no-store, private')
  @Redirect()
  async click(
    @Param('token') raw: string,
    @Req() request: FastifyRequest,
  ): Promise<{ url: string; statusCode: number }> {
    const { url } = await this.rpc.request(
      MessagesSubjects.trackClick,
      { token: token(raw), ...visitor(request) },
      { requestId: request.id },
    );
    return { url, statusCode: 302 };
  }
}
