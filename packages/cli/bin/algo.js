#!/usr/bin/env node
// The `algo` command: loads tsx (as `npm start` does with `node --import tsx`) and runs the
// TypeScript entry point. Works from a checkout after `npm install` and after `npm install -g`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
