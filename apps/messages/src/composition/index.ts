export {
  attachmentBytes,
  checkContentRules,
  ContentRuleError,
  customHeaders,
  inlineContentId,
  RESERVED_HEADERS,
  unsafeHeaderText,
} from './content-rules';
export type { ComposeAddress, ComposeInput } from './mime';
export { composeMime, parseMime } from './mime';
export { composedSizeUpperBound } from './mime-size-bound';
export type { MessageTemplates, RenderOptions, TemplateField } from './templates';
export {
  mergeSubstitutions,
  renderTemplates,
  renderTemplatesBatch,
  TEMPLATE_LIMITS,
  TemplateRenderError,
} from './templates';
