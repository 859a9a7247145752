/**
 * The `dedup` command line. Each subcommand lives in its own module under `cli/commands/` and is
 * registered here.
 * @module
 */
import { initDedupWasm } from '../wasm/loader.js';
import { commands, usage } from './registry.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(usage());
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`dedup: unknown command '${name}' (try: ${Object.keys(commands).join(', ')})\n`);
    return 1;
  }
  await initDedupWasm();
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`dedup: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
