export { decodeEncodedWords } from './encoded-words';
export {
  attachmentBytes,
  ContentRuleError,
  CR_LF_NUL,
  inlineContentId,
  isMessageType,
  isReservedHeader,
  isTraceHeader,
  RESERVED_HEADERS,
  unsafeHeaderText,
} from './header-rules';
export type { TrackedHtml, TrackingChoice, TrackingSettings } from './html-tracker';
export { HtmlTracker } from './html-tracker';
export type { TrackedLink } from './html-tracking';
export { appendOpenPixel, rewriteLinks } from './html-tracking';
export { hasOverlongLine, hasOverlongTextLine, MAX_LINE_OCTETS } from './line-length';
export type { ComposeAddress, ComposeInput } from './mime';
export { composeMime, parseMime } from './mime';
export { composedSizeUpperBound } from './mime-size-bound';
export type { TrackedRaw } from './raw-mime-tracking';
export { trackRawMime } from './raw-mime-tracking';
export {
  fromSourcesRecord,
  recipientPartOfView,
  toRecipientPartRecord,
  toSourcesRecord,
} from './sources-record';
export type {
  MessageKind,
  PreparedMessage,
  RecipientPart,
  SendSources,
} from './stored-composition';
export { renderFor, StoredComposer } from './stored-composition';
export type { MessageTemplates, RenderOptions, TemplateField } from './templates';
export {
  mergeSubstitutions,
  renderTemplates,
  renderTemplatesBatch,
  TEMPLATE_LIMITS,
  TemplateRenderError,
} from './templates';
export type { TrackingKind } from './tracking-token';
export { readTrackingToken, trackingToken } from './tracking-token';
