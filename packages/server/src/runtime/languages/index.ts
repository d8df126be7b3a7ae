/** Every language the builder knows; adding a language = adding its adapter here. */
import type { LanguageAdapter } from './adapter.js';
import { pythonAdapter } from './python/adapter.js';
import { javaAdapter } from './java/adapter.js';
import { scalaAdapter } from './scala/adapter.js';
import { javascriptAdapter } from './javascript/adapter.js';
import { rubyAdapter } from './ruby/adapter.js';
import { rAdapter } from './r/adapter.js';
import { rustAdapter } from './rust/adapter.js';

export const LANGUAGE_ADAPTERS: LanguageAdapter[] = [
  pythonAdapter,
  javascriptAdapter,
  rubyAdapter,
  rAdapter,
  rustAdapter,
  javaAdapter,
  scalaAdapter,
];
