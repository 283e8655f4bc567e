import {
  type CreateMessageBody,
  type CreateMessageResult,
  MessagesSubjects,
  V1SendBody,
  type V1SendResult,
} from '@envoi/contracts-messages';
import { emailDomain } from '@envoi/shared-edge';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';

import { domainFromBody, RequireScopes } from '../auth/scope-policy';
import { BodyPipe, Ctx, type RequestContext } from '../http/request-context';
import { SendPayloads } from '../http/uploads';

/** v1 → v2 (spec 9): content.* to the top level, text_body/html_body renamed. */
export function toV2Body(v1: V1SendBody): CreateMessageBody {
  const { content } = v1;
  return {
    from: v1.from,
    recipients: v1.recipients.map((recipient) => ({ ...recipient })),
    subject: content.subject,
    ...(content.text_body === undefined ? {} : { text_content: content.text_body }),
    ...(content.html_body === undefined ? {} : { html_content: content.html_body }),
    ...(content.attachments === undefined ? {} : { attachments: content.attachments }),
    ...(content.headers === undefined ? {} : { headers: content.headers }),
    ...(content.reply_to === undefined ? {} : { reply_to: content.reply_to }),
  };
}

/** v2's per-recipient results as v1's counts (spec 4.1). */
export function toV1Result(result: CreateMessageResult): V1SendResult {
  const failed = result.data.filter((message) => message.status === 'error');
  return {
    success_count: result.data.length - failed.length,
    fail_count: failed.length,
    failed_recipients: failed.map((message) => message.recipient.email),
    errors: failed.map((message) => `${message.recipient.email}: ${message.error ?? 'not sent'}`),
  };
}

/** The legacy send (spec 4.1), in maintenance mode: 200 with counts, `{"status"}` errors. */
@Controller('v1/email')
export class V1EmailController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly payloads: SendPayloads,
  ) {}

  /**
   * v1 has no granular scopes of its own (spec 4.1); Envoi still requires the send scope for the
   * from-domain, so a read-only v2 key cannot send through the legacy door.
   */
  @Post('send')
  @HttpCode(200)
  @RequireScopes(['messages:send:{domain}'], {
    domainFrom: domainFromBody(V1SendBody, (body) => emailDomain(body.from.email)),
  })
  async send(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(V1SendBody)) v1: V1SendBody,
  ): Promise<V1SendResult> {
    const body = toV2Body(v1);
    const result = await this.rpc.request(
      MessagesSubjects.createMessage,
      {
        account_id: ctx.principal.account_id,
        credential_id: ctx.principal.key_id,
        api: 'v1',
        ...(await this.payloads.prepare(body, ctx.requestId)),
      },
      { requestId: ctx.requestId },
    );
    return toV1Result(result);
  }
}
