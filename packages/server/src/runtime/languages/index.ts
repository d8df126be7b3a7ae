/** Every language the builder knows; adding a language = adding its adapter here. */
import type { LanguageAdapter } from './adapter.js';
import { pythonAdapter } from './python/adapter.js';

export const LANGUAGE_ADAPTERS: LanguageAdapter[] = [pythonAdapter];
