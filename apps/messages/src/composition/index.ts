export { checkContentRules, customHeaders } from './content-rules';
