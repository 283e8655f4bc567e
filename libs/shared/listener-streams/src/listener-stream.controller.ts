import {
  AckListenerStreamRequest,
  type AttachedListenerStreamRecord,
  AttachListenerStreamRequest,
  type ListenerStreamAckRecord,
  type ListenerStreamEventsRecord,
  ListenerStreamSessionRef,
  type ListenerStreamSubjects,
  ReadListenerStreamRequest,
} from '@envoi/contracts-core';
import { Controller, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { ListenerStreams } from './listener-streams';

/**
 * The bus controller of a service's listener streams, on `subjects`; the service provides its
 * ListenerStreams (the one injected here).
 */
export function listenerStreamController(subjects: ListenerStreamSubjects): Type<unknown> {
  @Controller()
  class ListenerStreamController {
    constructor(private readonly streams: ListenerStreams) {}

    @MessagePattern(subjects.attach.name)
    attach(@Payload() request: AttachListenerStreamRequest): Promise<AttachedListenerStreamRecord> {
      return this.streams.attach(
        request.account_id,
        request.target_id,
        request.session_id,
        request.force,
        request.lease_ms,
        request.domains,
      );
    }

    @MessagePattern(subjects.read.name)
    read(@Payload() request: ReadListenerStreamRequest): Promise<ListenerStreamEventsRecord> {
      return this.streams.read(
        request.target_id,
        request.session_id,
        request.after_seq,
        request.limit,
      );
    }

    @MessagePattern(subjects.ack.name)
    ack(@Payload() request: AckListenerStreamRequest): Promise<ListenerStreamAckRecord> {
      return this.streams.ack(request.target_id, request.session_id, request.seq, request.lease_ms);
    }

    @MessagePattern(subjects.detach.name)
    detach(@Payload() request: ListenerStreamSessionRef): Promise<ListenerStreamAckRecord> {
      return this.streams.detach(request.target_id, request.session_id);
    }
  }
  return ListenerStreamController;
}
