export { serviceGenerator } from './service/generator';
