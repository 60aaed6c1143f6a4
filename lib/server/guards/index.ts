export { checkGuard } from './guards';
